package io.queueenterprise.operator.it;

import java.util.Map;

import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.k3s.K3sContainer;
import org.testcontainers.utility.DockerImageName;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.queueenterprise.operator.model.OperatorSettings;

/**
 * {@link QueueClusterScenario} on K3s in a container (Testcontainers), where a container engine exists (a user's CI).
 * Skipped, by Testcontainers, on machines without one, such as this project's development machine, where
 * {@link QueueClusterIT} runs the same scenario on the test bed. Image: {@code -Dqe.k3s.image}.
 */
@Testcontainers(disabledWithoutDocker = true)
class K3sQueueClusterIT extends QueueClusterScenario {
    private static final K3sContainer K3S = new K3sContainer(
        DockerImageName.parse(System.getProperty("qe.k3s.image", "rancher/k3s:v1.34.8-k3s1")));

    K3sQueueClusterIT() {
        super(startedClient());
    }

    private static io.fabric8.kubernetes.client.KubernetesClient startedClient() {
        K3S.start();
        return new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(K3S.getKubeConfigYaml())).build();
    }

    @Override
    protected OperatorSettings settings() {
        // the node image is not in K3s's image store: the pod stays Pending, which this scenario does not need
        return new OperatorSettings("queue-enterprise.local/node:latest", "IfNotPresent", OperatorSettings.DEFAULT_NODE_ARGUMENTS,
            "cluster.local", "queue-enterprise-system", Map.of("app.kubernetes.io/name", "queue-enterprise-operator"));
    }

    @Override
    protected void afterCleanUp() {
        client.close();
        K3S.stop();
    }

}
