package io.queueenterprise.operator.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.queueenterprise.operator.api.AuthorizedClients;
import io.queueenterprise.operator.api.NetworkMode;
import io.queueenterprise.operator.api.QueueCluster;

/** The manifests a QueueCluster becomes, without a cluster. */
@org.junit.jupiter.api.Tag("unit")
class QueueClusterModelTest {
    private static final OperatorSettings SETTINGS = OperatorSettings.defaults();

    private static StatefulSet statefulSet(QueueCluster cluster) {
        return new QueueClusterModel(cluster, SETTINGS).statefulSet();
    }

    private static Container node(StatefulSet set) {
        return set.getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    @Test
    void podsAreGuaranteedQosWithWholeCpusOnTheTunedPool() {
        StatefulSet set = statefulSet(TestClusters.threeReplicas());
        Container node = node(set);
        Map<String, Quantity> requests = node.getResources().getRequests();
        assertEquals(requests, node.getResources().getLimits(), "Guaranteed QoS: requests = limits");
        assertEquals(new Quantity("2"), requests.get("cpu"));
        assertEquals(new Quantity("2Gi"), requests.get("memory"));
        PodSpec pod = set.getSpec().getTemplate().getSpec();
        assertEquals(Map.of("queue-enterprise.io/pool", "tuned", "queue-enterprise.io/cpu-manager-policy", "static"), pod.getNodeSelector(),
            "pinned: the pool, and only its nodes labelled as running the static CPU manager");
        assertEquals("queue-enterprise.io/dedicated", pod.getTolerations().get(0).getKey());
        assertEquals(3, set.getSpec().getReplicas());
        assertEquals("replica-nodes", set.getSpec().getServiceName());
        assertEquals("OnDelete", set.getSpec().getUpdateStrategy().getType(), "the operator orders restarts (leader last)");
    }

    @Test
    void aSlowStartIsNotKilledByTheLivenessProbe() {
        Container node = node(statefulSet(TestClusters.threeReplicas()));
        // the node may take 120 s to start after SIGKILL; the liveness probe only counts once the startup probe passed
        assertEquals("/healthz", node.getStartupProbe().getHttpGet().getPath());
        int startupSeconds = node.getStartupProbe().getPeriodSeconds() * node.getStartupProbe().getFailureThreshold();
        assertTrue(startupSeconds > 120, "startup allowance " + startupSeconds + " s");
        assertEquals("/healthz", node.getLivenessProbe().getHttpGet().getPath());
        // and a started node is seen at once: a rollout restarts the replicas one after another, each waiting on it
        assertEquals(1, node.getStartupProbe().getPeriodSeconds(), "the startup probe asks each second");
        assertTrue(node.getReadinessProbe().getPeriodSeconds() <= 2, "readiness every " + node.getReadinessProbe().getPeriodSeconds() + " s");
    }

    @Test
    void unpinnedPodsGoAnywhereInThePoolWithTheirCpuAsRequested() {
        QueueCluster cluster = TestClusters.threeReplicas();
        cluster.getSpec().setPinned(false);
        cluster.getSpec().setCoresPerReplica("500m");
        StatefulSet set = statefulSet(cluster);
        assertEquals(Map.of("queue-enterprise.io/pool", "tuned"), set.getSpec().getTemplate().getSpec().getNodeSelector());
        assertEquals(new Quantity("500m"), node(set).getResources().getRequests().get("cpu"), "its share reserved");
        assertEquals(Map.of("memory", new Quantity("2Gi")), node(set).getResources().getLimits(),
            "no CPU limit: a fractional CFS quota stalls a JVM that bursts (GC, JIT, start); memory stays capped");
    }

    @Test
    void podsMeetTheRestrictedPodSecurityStandard() {
        PodSpec pod = statefulSet(TestClusters.threeReplicas()).getSpec().getTemplate().getSpec();
        assertTrue(pod.getSecurityContext().getRunAsNonRoot());
        assertNotEquals(0L, pod.getSecurityContext().getRunAsUser());
        assertEquals("RuntimeDefault", pod.getSecurityContext().getSeccompProfile().getType());
        assertFalse(pod.getAutomountServiceAccountToken(), "the node needs no Kubernetes API access");
        for (Container container : pod.getContainers()) {
            assertFalse(container.getSecurityContext().getAllowPrivilegeEscalation());
            assertTrue(container.getSecurityContext().getReadOnlyRootFilesystem());
            assertEquals(List.of("ALL"), container.getSecurityContext().getCapabilities().getDrop());
            assertTrue(container.getSecurityContext().getCapabilities().getAdd().isEmpty());
            assertNull(container.getSecurityContext().getPrivileged());
        }
        for (Volume volume : pod.getVolumes()) {
            assertNull(volume.getHostPath(), "restricted: no hostPath volumes: " + volume.getName());
        }
    }

    @Test
    void secretsAreMountedReadOnlyWithMode0400() {
        QueueCluster cluster = TestClusters.threeReplicas();
        cluster.getSpec().setClientCredentialSecret("clients");
        StatefulSet set = statefulSet(cluster);
        List<Volume> secrets = set.getSpec().getTemplate().getSpec().getVolumes().stream()
            .filter(volume -> volume.getSecret() != null).toList();
        assertEquals(Set.of("replica-admin-token", "replica-peer-credential", "clients", "trading-write-keys"),
            secrets.stream().map(volume -> volume.getSecret().getSecretName()).collect(Collectors.toSet()));
        for (Volume secret : secrets) {
            assertEquals(0400, secret.getSecret().getDefaultMode(), secret.getName());
            assertTrue(node(set).getVolumeMounts().stream()
                .anyMatch(mount -> mount.getName().equals(secret.getName()) && mount.getReadOnly()), secret.getName() + " mounted read-only");
        }
    }

    @Test
    void writeKeysAreMountedAndConfiguredExactlyWhenTheirSecretIsNamed() {
        QueueCluster writing = TestClusters.threeReplicas();
        StatefulSet set = statefulSet(writing);
        Volume keys = set.getSpec().getTemplate().getSpec().getVolumes().stream()
            .filter(volume -> volume.getSecret() != null && "trading-write-keys".equals(volume.getSecret().getSecretName()))
            .findFirst().orElseThrow(() -> new AssertionError("no volume of the write-key Secret"));
        assertEquals(0400, keys.getSecret().getDefaultMode());
        assertTrue(node(set).getVolumeMounts().stream().anyMatch(mount -> mount.getName().equals(keys.getName())
            && mount.getMountPath().equals(NodePaths.WRITE_KEY_DIRECTORY) && mount.getReadOnly()), "mounted read-only");
        NodeConfigModel.configMapData(writing, SETTINGS).values().forEach(document -> assertTrue(
            document.contains("\nwriteKeyDirectory: " + NodePaths.WRITE_KEY_DIRECTORY + "\n"), document));

        QueueCluster tailingOnly = TestClusters.threeReplicas();
        tailingOnly.getSpec().setWriteKeySecret(null);
        assertNoWriteKeys(tailingOnly);
        // the CRD refuses this one; were it ever applied, the node would refuse a writeKeyDirectory without its client credential
        QueueCluster noClients = TestClusters.threeReplicas();
        noClients.getSpec().setClientCredentialSecret(null);
        assertNoWriteKeys(noClients);
    }

    private static void assertNoWriteKeys(QueueCluster cluster) {
        StatefulSet set = statefulSet(cluster);
        assertTrue(set.getSpec().getTemplate().getSpec().getVolumes().stream()
            .noneMatch(volume -> volume.getSecret() != null && "trading-write-keys".equals(volume.getSecret().getSecretName())),
            "a volume of the write-key Secret");
        assertTrue(node(set).getVolumeMounts().stream().noneMatch(mount -> mount.getMountPath().equals(NodePaths.WRITE_KEY_DIRECTORY)),
            "a mount at " + NodePaths.WRITE_KEY_DIRECTORY);
        NodeConfigModel.configMapData(cluster, SETTINGS).values().forEach(document ->
            assertFalse(document.contains("writeKeyDirectory"), document));
    }

    @Test
    void sharedMemoryIsMemoryBackedAndSized() {
        Volume shm = statefulSet(TestClusters.threeReplicas()).getSpec().getTemplate().getSpec().getVolumes().stream()
            .filter(volume -> volume.getName().equals("shm")).findFirst().orElseThrow();
        assertEquals("Memory", shm.getEmptyDir().getMedium());
        assertEquals(new Quantity("256Mi"), shm.getEmptyDir().getSizeLimit());
        assertTrue(node(statefulSet(TestClusters.threeReplicas())).getVolumeMounts().stream()
            .anyMatch(mount -> mount.getName().equals("shm") && mount.getMountPath().equals("/dev/shm")));
    }

    @Test
    void dataLivesOnAClaimPerReplica() {
        StatefulSet set = statefulSet(TestClusters.threeReplicas());
        var claim = set.getSpec().getVolumeClaimTemplates().get(0);
        assertEquals("data", claim.getMetadata().getName());
        assertEquals(new Quantity("20Gi"), claim.getSpec().getResources().getRequests().get("storage"));
        assertTrue(node(set).getVolumeMounts().stream()
            .anyMatch(mount -> mount.getName().equals("data") && mount.getMountPath().equals(NodePaths.DATA_DIRECTORY)));
    }

    @Test
    void hostNetworkReplicasMustLandOnDifferentNodesPodNetworkOnesPreferTo() {
        QueueCluster cluster = TestClusters.threeReplicas();
        PodSpec podNetwork = statefulSet(cluster).getSpec().getTemplate().getSpec();
        assertFalse(podNetwork.getHostNetwork());
        assertEquals(1, podNetwork.getAffinity().getPodAntiAffinity().getPreferredDuringSchedulingIgnoredDuringExecution().size());
        assertTrue(podNetwork.getAffinity().getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution().isEmpty());

        cluster.getSpec().setNetworkMode(NetworkMode.HOST);
        PodSpec hostNetwork = statefulSet(cluster).getSpec().getTemplate().getSpec();
        assertTrue(hostNetwork.getHostNetwork());
        assertEquals("ClusterFirstWithHostNet", hostNetwork.getDnsPolicy());
        var required = hostNetwork.getAffinity().getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution();
        assertEquals("kubernetes.io/hostname", required.get(0).getTopologyKey());
        assertEquals(Map.of("app.kubernetes.io/name", "queue-enterprise", "app.kubernetes.io/instance", "replica"),
            required.get(0).getLabelSelector().getMatchLabels());
    }

    @Test
    void configurationChangeRollsThePods() {
        QueueCluster cluster = TestClusters.threeReplicas();
        String before = statefulSet(cluster).getSpec().getTemplate().getMetadata().getAnnotations().get(QueueClusterModel.CONFIG_HASH_ANNOTATION);
        assertEquals(before, statefulSet(TestClusters.threeReplicas()).getSpec().getTemplate().getMetadata().getAnnotations()
            .get(QueueClusterModel.CONFIG_HASH_ANNOTATION), "same resource, same hash");
        cluster.getSpec().getQueues().get(1).setAckTimeout("2s");
        assertNotEquals(before, statefulSet(cluster).getSpec().getTemplate().getMetadata().getAnnotations()
            .get(QueueClusterModel.CONFIG_HASH_ANNOTATION));
    }

    @Test
    void disruptionBudgetKeepsAMajority() {
        assertEquals(2, new QueueClusterModel(TestClusters.threeReplicas(), SETTINGS).podDisruptionBudget().getSpec().getMinAvailable().getIntVal());
        QueueCluster five = TestClusters.threeReplicas();
        five.getSpec().setReplicas(5);
        assertEquals(3, new QueueClusterModel(five, SETTINGS).podDisruptionBudget().getSpec().getMinAvailable().getIntVal());
        assertEquals(1, new QueueClusterModel(TestClusters.singleNode(), SETTINGS).podDisruptionBudget().getSpec().getMinAvailable().getIntVal());
    }

    @Test
    void headlessServicePublishesPeersBeforeTheyAreReady() {
        var service = new QueueClusterModel(TestClusters.threeReplicas(), SETTINGS).headlessService();
        assertEquals("None", service.getSpec().getClusterIP());
        assertTrue(service.getSpec().getPublishNotReadyAddresses());
        assertEquals(Map.of("app.kubernetes.io/name", "queue-enterprise", "app.kubernetes.io/instance", "replica"), service.getSpec().getSelector());
    }

    @Test
    void networkPolicyAdmitsReplicasTheOperatorAndAuthorisedClientsOnly() {
        QueueCluster cluster = TestClusters.threeReplicas();
        AuthorizedClients clients = new AuthorizedClients();
        clients.setPodSelector(Map.of("queue-enterprise.io/client", "replica"));
        cluster.getSpec().setAuthorizedClients(clients);
        NetworkPolicy policy = new QueueClusterModel(cluster, SETTINGS).networkPolicy();
        assertEquals(List.of("Ingress"), policy.getSpec().getPolicyTypes());
        List<NetworkPolicyIngressRule> rules = policy.getSpec().getIngress();
        // replicas: every port
        assertEquals(Map.of("app.kubernetes.io/name", "queue-enterprise", "app.kubernetes.io/instance", "replica"),
            rules.get(0).getFrom().get(0).getPodSelector().getMatchLabels());
        assertTrue(rules.get(0).getPorts().isEmpty());
        // the operator's namespace and pods: admin port only
        assertEquals(Map.of("kubernetes.io/metadata.name", "queue-enterprise-system"),
            rules.get(1).getFrom().get(0).getNamespaceSelector().getMatchLabels());
        assertEquals(List.of(NodePaths.ADMIN_PORT), rules.get(1).getPorts().stream().map(port -> port.getPort().getIntVal()).toList());
        // authorised clients: the client gateway's (Aeron) port only, never the replication port
        assertEquals(Map.of("queue-enterprise.io/client", "replica"), rules.get(2).getFrom().get(0).getPodSelector().getMatchLabels());
        assertEquals(List.of(NodePaths.CLIENT_PORT), rules.get(2).getPorts().stream().map(port -> port.getPort().getIntVal()).toList());
        // anyone: metrics only
        assertTrue(rules.get(3).getFrom().isEmpty());
        assertEquals(List.of(NodePaths.METRICS_PORT), rules.get(3).getPorts().stream().map(port -> port.getPort().getIntVal()).toList());
        assertEquals(4, rules.size());
    }

    @Test
    void credentialsAreRandomAndLongEnough() {
        QueueClusterModel model = new QueueClusterModel(TestClusters.threeReplicas(), SETTINGS);
        SecureRandom random = new SecureRandom();
        Secret first = model.credentialSecret("replica-admin-token", "token", random);
        Secret second = model.credentialSecret("replica-admin-token", "token", random);
        assertNotEquals(first.getStringData().get("token"), second.getStringData().get("token"));
        assertTrue(first.getStringData().get("token").length() >= 43, "256 bits, base64url");
    }

    @Test
    void podMonitorSelectsTheNodesMetricsPort() {
        var monitor = new QueueClusterModel(TestClusters.threeReplicas(), SETTINGS).podMonitor();
        assertEquals("monitoring.coreos.com/v1", monitor.getApiVersion());
        assertEquals("PodMonitor", monitor.getKind());
        assertEquals("{selector={matchLabels={app.kubernetes.io/name=queue-enterprise, app.kubernetes.io/instance=replica}},"
            + " podMetricsEndpoints=[{port=metrics, path=/metrics}]}", monitor.getAdditionalProperties().get("spec").toString());
    }
}
