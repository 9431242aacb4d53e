package io.queueenterprise.operator.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import com.marcnuri.helm.Helm;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.queueenterprise.kubernetes.testbed.KubernetesTestbed;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.QueueEnterpriseOperator;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.api.StorageSpec;

/**
 * The chart installed as a user installs it, by real Helm (helm-java's bundled library) against the test bed's real
 * API server, and its Deployment run by the real kubelet from the operator image ({@code kubernetes/build-image.sh
 * operator}, imported into containerd): CRDs, RBAC and the operator pod, non-root on a read-only root file system. The
 * pod becomes ready (its informers connected), takes the leader-election Lease under its own name, and reconciles a
 * QueueCluster in the namespace it watches (Secrets, ConfigMap, StatefulSet, status) with the chart's RBAC and nothing
 * else; its metrics endpoint counts the reconciliations.
 * <p>
 * The test bed has no kube-proxy, so the {@code kubernetes} Service's cluster IP does not route: the release sets the
 * chart's {@code hostNetwork: true} and {@code kubernetesApiServer} (the API server's own address, loopback) — the
 * documented setting for such clusters. The QueueCluster's replica claims a storage class with no volume: its pod stays
 * Pending (the node itself is {@code NodeInPodsIT}'s subject; here the operator is).
 */
@KubernetesTestbed
@org.junit.jupiter.api.Tag("kubernetes")
@org.junit.jupiter.api.Tag("slow")
class OperatorDeploymentIT {
    private static final Path CHART = Path.of(System.getProperty("qe.helm.chart.dir", "../helm/queue-enterprise-operator"));
    private static final String RELEASE = "qe";
    private static final String CLUSTER = "deployed";

    private final Testbed testbed;
    private final KubernetesClient client;

    OperatorDeploymentIT(Testbed testbed) {
        this.testbed = testbed;
        this.client = testbed.client();
    }

    @Test
    @Timeout(value = 25, unit = TimeUnit.MINUTES)
    void theChartsDeploymentRunsTheOperatorImageWhichTakesTheLeaseReconcilesAndIsUpgradedInPlace() throws Exception {
        String tag = System.getProperty("qe.kubernetes.image.tag");
        String operatorImage = testbed.importImage("operator",
            Path.of(System.getProperty("qe.kubernetes.operator-image.app-dir")), tag);
        assertEquals("queue-enterprise.local/operator:" + tag, operatorImage, "the chart's default image.repository");
        String suffix = UUID.randomUUID().toString().substring(0, 6);
        String system = "qe-system-" + suffix;
        String watched = "qe-watched-" + suffix;
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        int metricsPort = freeLocalPort();
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(watched).endMetadata().build()).create();
        boolean installed = false;
        try {
            // A plain cluster (no Prometheus Operator): each missing requirement is refused in one line, before anything
            // but crds/ is created: no release to uninstall, no namespace, no operator pod
            assertInstallRefused(system, apiServer, metricsPort, "monitoring.coreos.com/v1",
                "prometheusRule.enabled", true, "watchNamespaces[0]", watched);
            assertInstallRefused(system, apiServer, metricsPort, "namespace qe-absent-" + suffix + " does not exist",
                "watchNamespaces[0]", "qe-absent-" + suffix);

            new Helm(CHART).install().withName(RELEASE).withNamespace(system).createNamespace()
                .withKubeConfig(testbed.kubeconfig())
                .set("image.tag", tag).set("image.pullPolicy", "Never")
                .set("nodeImage.tag", tag).set("nodeImage.pullPolicy", "Never")
                .set("watchNamespaces[0]", watched)
                .set("replicaCount", 1)   // host network: two replicas on the one node would share the metrics port
                .set("hostNetwork", true)
                .set("kubernetesApiServer.host", apiServer.getHost())
                .set("kubernetesApiServer.port", apiServer.getPort())
                .set("metrics.port", metricsPort)
                .call();
            installed = true;
            assertNotNull(client.apiextensions().v1().customResourceDefinitions().withName(TestbedFixtures.CRD_NAME).get(), "Helm installed crds/");

            Pod operatorPod = waitForReadyOperatorPod(system);
            assertEquals(operatorImage, operatorPod.getSpec().getContainers().get(0).getImage());
            assertEquals(Long.valueOf(10001), operatorPod.getSpec().getSecurityContext().getRunAsUser());
            assertTrue(operatorPod.getSpec().getContainers().get(0).getSecurityContext().getReadOnlyRootFilesystem());

            Lease lease = client.leases().inNamespace(system).withName(QueueEnterpriseOperator.LEASE_NAME)
                .waitUntilCondition(l -> l != null && l.getSpec().getHolderIdentity() != null, 3, TimeUnit.MINUTES);
            assertEquals(operatorPod.getMetadata().getName(), lease.getSpec().getHolderIdentity(),
                "the Lease is held by the operator's pod, under its own name");

            QueueCluster created = client.resources(QueueCluster.class).inNamespace(watched).resource(cluster()).create();
            QueueCluster reconciled;
            try {
                reconciled = client.resources(QueueCluster.class).inNamespace(watched).withName(CLUSTER)
                    .waitUntilCondition(c -> c != null && c.getStatus() != null && c.getStatus().getObservedGeneration() != null,
                        4, TimeUnit.MINUTES);
            } catch (RuntimeException e) {
                throw new AssertionError("the operator pod wrote no status: " + e + "\n--- operator log ---\n" + log(operatorPod), e);
            }
            assertEquals(created.getMetadata().getGeneration(), reconciled.getStatus().getObservedGeneration());
            Map<String, String> conditions = new TreeMap<>();
            reconciled.getStatus().getConditions().forEach(c -> conditions.put(c.getType(), c.getStatus() + " " + c.getReason()));
            assertEquals("False NotRequested", conditions.get("Pinned"), conditions.toString());   // pinned: false
            for (String secret : List.of(CLUSTER + "-admin-token", CLUSTER + "-peer-credential")) {
                assertNotNull(client.secrets().inNamespace(watched).withName(secret).get(), secret);
            }
            assertNotNull(client.configMaps().inNamespace(watched).withName(CLUSTER + "-config").get());
            StatefulSet statefulSet = client.apps().statefulSets().inNamespace(watched).withName(CLUSTER).get();
            assertNotNull(statefulSet);
            assertTrue(statefulSet.getMetadata().getOwnerReferences().stream().anyMatch(o -> CLUSTER.equals(o.getName())));
            assertEquals(testbed.nodeImage(), statefulSet.getSpec().getTemplate().getSpec().getContainers().get(0).getImage(),
                "the node image the chart's nodeImage values name");

            // the pod's own metrics endpoint (host network: the node's address), as Prometheus would scrape it
            String metrics = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build().send(HttpRequest.newBuilder(
                    URI.create("http://" + operatorPod.getStatus().getPodIP() + ":" + metricsPort + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(metrics.contains("queue_enterprise_operator_reconciliations_total{"), metrics);
            assertTrue(metrics.contains("cluster=\"" + CLUSTER + "\""), metrics);

            // helm upgrade with a changed pod template, waiting as a user's `helm upgrade --wait` does: with the host
            // network, a surge pod could not bind metrics.port while the old pod held it, and this waited until its
            // timeout with the new pod Pending. The replacement takes the Lease.
            String formerPod = operatorPod.getMetadata().getName();
            new Helm(CHART).upgrade().withName(RELEASE).withNamespace(system).withKubeConfig(testbed.kubeconfig())
                .reuseValues().set("resources.limits.memory", "640Mi").waitReady().withTimeout(240).call();
            Pod replacement = waitForReadyOperatorPod(system);
            assertNotEquals(formerPod, replacement.getMetadata().getName(), "a new pod after the upgrade");
            assertEquals("640Mi", replacement.getSpec().getContainers().get(0).getResources().getLimits().get("memory").toString());
            Lease taken = client.leases().inNamespace(system).withName(QueueEnterpriseOperator.LEASE_NAME)
                .waitUntilCondition(l -> l != null && replacement.getMetadata().getName().equals(l.getSpec().getHolderIdentity()),
                    3, TimeUnit.MINUTES);
            assertEquals(replacement.getMetadata().getName(), taken.getSpec().getHolderIdentity());
        } finally {
            client.resources(QueueCluster.class).inNamespace(watched).delete();
            if (installed) {
                Helm.uninstall(RELEASE).withNamespace(system).withKubeConfig(testbed.kubeconfig()).call();
            }
            for (String namespace : List.of(watched, system)) {
                client.namespaces().withName(namespace).delete();
            }
            for (String namespace : List.of(watched, system)) {
                client.namespaces().withName(namespace).waitUntilCondition(Objects::isNull, 3, TimeUnit.MINUTES);
            }
            TestbedFixtures.removeCrd(client);
        }
    }

    /** An install refused by the chart's check with {@code message}, leaving no release, namespace or pod. */
    private void assertInstallRefused(String system, URI apiServer, int metricsPort, String message, Object... sets) {
        var install = new Helm(CHART).install().withName(RELEASE).withNamespace(system).createNamespace()
            .withKubeConfig(testbed.kubeconfig()).set("replicaCount", 1).set("hostNetwork", true)
            .set("kubernetesApiServer.host", apiServer.getHost()).set("kubernetesApiServer.port", apiServer.getPort())
            .set("metrics.port", metricsPort);
        for (int i = 0; i < sets.length; i += 2) {
            install.set((String) sets[i], sets[i + 1]);
        }
        Exception refused = assertThrows(Exception.class, install::call);
        assertTrue(refused.getMessage().contains(message), refused.getMessage());
        assertTrue(Helm.list().all().withNamespace(system).withKubeConfig(testbed.kubeconfig()).call().isEmpty(),
            "a refused install leaves no release behind");
        assertNull(client.namespaces().withName(system).get(), "a refused install creates no namespace");
    }

    /** The Deployment's one pod, Ready (its readiness probe: {@code /readyz}, every informer connected). */
    private Pod waitForReadyOperatorPod(String namespace) {
        try {
            return client.pods().inNamespace(namespace).withLabel("app.kubernetes.io/instance", RELEASE)
                .informOnCondition(pods -> pods.size() == 1 && pods.get(0).getMetadata().getDeletionTimestamp() == null && pods.get(0).getStatus().getConditions().stream()
                    .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus())))
                .get(6, TimeUnit.MINUTES).get(0);
        } catch (Exception e) {
            StringBuilder state = new StringBuilder();
            for (Pod pod : client.pods().inNamespace(namespace).list().getItems()) {
                state.append("\n").append(pod.getMetadata().getName()).append(" ").append(pod.getStatus().getPhase())
                    .append(" ").append(pod.getStatus().getConditions()).append(" ").append(pod.getStatus().getContainerStatuses())
                    .append("\n--- log ---\n").append(log(pod));
            }
            throw new AssertionError("the operator pod did not become Ready within 6 minutes: " + e + state, e);
        }
    }

    private String log(Pod pod) {
        try {
            return client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .tailingLines(60).getLog();
        } catch (RuntimeException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** A port no process on this host listens on now (the operator's pod binds it in the host's network namespace). */
    private static int freeLocalPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static QueueCluster cluster() {
        QueueDefinition queue = new QueueDefinition();
        queue.setName("orders");
        queue.setRollCycle(RollCycle.FAST_HOURLY);
        queue.setEncryption(Encryption.NONE);
        QueueClusterSpec spec = new QueueClusterSpec();
        spec.setQueues(List.of(queue));
        spec.setReplicas(1);
        spec.setPinned(false);
        spec.setCoresPerReplica("100m");
        spec.setMemory("256Mi");
        spec.setSharedMemory("64Mi");   // at most half of memory (CEL)
        StorageSpec storage = new StorageSpec();
        storage.setSize("1Gi");
        storage.setStorageClassName("qe-it-no-volume");   // stays Pending: this test is about the operator
        spec.setStorage(storage);
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName(CLUSTER).build());
        cluster.setSpec(spec);
        return cluster;
    }
}
