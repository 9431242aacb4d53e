package io.queueenterprise.operator.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.queueenterprise.kubernetes.testbed.KubernetesTestbed;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.ReplicaStatus;
import io.queueenterprise.operator.model.ClusterNames;
import io.queueenterprise.operator.model.OperatorSettings;

/**
 * {@link QueueClusterScenario} on the test bed's REAL kube-apiserver, scheduler and kubelet (static CPU manager), and
 * beyond it: the pod the operator asked for runs the real queue node ({@code qe node}, the node image) on the real
 * kubelet, Guaranteed, granted an exclusive core; the operator promotes it and, from the node's own report of its
 * {@code Cpus_allowed_list}, says Pinned True (ExclusiveCores), and the kubelet's PodResources API names that very
 * core. (That a hot thread pinned inside the grant stays on its core is {@code GrantedCoresIT}'s.)
 */
@KubernetesTestbed
class QueueClusterIT extends QueueClusterScenario {
    private static final String STORAGE_CLASS = "qe-it-local";

    private final Testbed testbed;
    private Path volumeDirectory;
    private String volumeName;

    QueueClusterIT(Testbed testbed) {
        super(testbed.client());
        this.testbed = testbed;
    }

    @Override
    protected OperatorSettings settings() {
        return new OperatorSettings(testbed.nodeImage(), "Never", OperatorSettings.DEFAULT_NODE_ARGUMENTS,
            "cluster.local", "queue-enterprise-system", Map.of("app.kubernetes.io/name", "queue-enterprise-operator"));
    }

    @Override
    protected void prepare(QueueCluster solo) throws IOException {
        // a tuned node: the test bed's kubelet runs the static CPU manager policy
        client.nodes().withName(testbed.nodeName()).edit(node -> {
            node.getMetadata().getLabels().put(ClusterNames.TUNED_NODE_LABEL, ClusterNames.TUNED_NODE_VALUE);
            return node;
        });
        createLocalVolume();
        solo.getSpec().getStorage().setStorageClassName(STORAGE_CLASS);
        solo.getSpec().setMemory("1Gi");          // the real node: a JVM, Chronicle's mapped files
        solo.getSpec().setSharedMemory("128Mi");  // Aeron's embedded driver
    }

    @Override
    protected void afterReconciled(QueueCluster created) throws Exception {
        // the real scheduler and kubelet run the pod: Guaranteed, and the static CPU manager grants it a core
        Pod pod = client.pods().inNamespace(namespace).withName("solo-0").waitUntilCondition(p -> p != null && p.getStatus() != null
            && failIfFailed(p) && "Running".equals(p.getStatus().getPhase()), 5, TimeUnit.MINUTES);
        assertEquals("Guaranteed", pod.getStatus().getQosClass());
        assertEquals(new Quantity("1"), pod.getSpec().getContainers().get(0).getResources().getLimits().get("cpu"));
        // the real node answers: the operator promotes it, and judges pinning from the node's own Cpus_allowed_list
        QueueCluster pinned = pinnedStatus();
        ReplicaStatus replica = pinned.getStatus().getReplicas().get(0);
        assertEquals("solo-0", pinned.getStatus().getLeader());
        assertEquals(1L, pinned.getStatus().getTerm());
        String granted = replica.getCpusAllowedList();
        assertTrue(granted.matches("[1-9][0-9]*"), "one exclusive core, never the reserved core 0: " + replica.getCpusAllowedList());
        assertEquals(Boolean.TRUE, replica.getExclusiveCores());
        assertEquals(List.of(Integer.parseInt(granted)),
            testbed.podResources().container(namespace, "solo-0", "node").orElseThrow().cpuIds(), "the kubelet's own record");

        // the Secrets as the kubelet wrote them for the pod: defaultMode 0400 plus group read for fsGroup, so the
        // node (uid and gid 10001) reads them and nobody else in the pod can
        Path volumes = Path.of(TestbedEnvironment.value("POD_RESOURCES_SOCKET")).getParent().getParent()
            .resolve("pods").resolve(pod.getMetadata().getUid()).resolve("volumes");
        for (String secret : List.of("admin-token/token", "peer-credential/credential")) {
            Path file = volumes.resolve("kubernetes.io~secret").resolve(secret).toRealPath();
            assertEquals("r--r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)), file.toString());
            assertEquals(10001, Files.getAttribute(file, "unix:gid"), file + " group");
            assertEquals(0, Files.getAttribute(file, "unix:uid"), file + " owner");
        }
        Path config = volumes.resolve("kubernetes.io~configmap").resolve("config").resolve("solo-0.yaml").toRealPath();
        assertEquals("r--r--r--", PosixFilePermissions.toString(Files.getPosixFilePermissions(config)), config.toString());
    }

    @Override
    protected void cleanUpPrepared() throws IOException {
        if (volumeName != null) {
            client.persistentVolumes().withName(volumeName).delete();
        }
        client.nodes().withName(testbed.nodeName()).edit(node -> {
            node.getMetadata().getLabels().remove(ClusterNames.TUNED_NODE_LABEL);
            return node;
        });
        if (volumeDirectory != null) {
            TestbedFixtures.deleteTree(volumeDirectory);
        }
    }

    private boolean failIfFailed(Pod pod) {
        if ("Failed".equals(pod.getStatus().getPhase())) {
            throw new AssertionError("pod failed: " + pod.getStatus() + "\n" + client.pods().inNamespace(namespace)
                .withName(pod.getMetadata().getName()).getLog());
        }
        return true;
    }

    /** The status once the operator has seen the node leading and said Pinned True (the node's JVM starts first). */
    private QueueCluster pinnedStatus() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        QueueCluster cluster = null;
        while (System.nanoTime() < deadline) {
            cluster = clusters().inNamespace(namespace).withName("solo").get();
            if (cluster.getStatus() != null && cluster.getStatus().getConditions() != null && cluster.getStatus().getConditions().stream()
                    .anyMatch(c -> "Pinned".equals(c.getType()) && "True".equals(c.getStatus()))
                    && cluster.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()))) {
                return cluster;
            }
            Thread.sleep(1_000);
        }
        throw new AssertionError("the operator did not report the node leading and pinned within 5 min: "
            + (cluster == null ? null : cluster.getStatus()) + "\nnode log:\n"
            + client.pods().inNamespace(namespace).withName("solo-0").tailingLines(30).getLog());
    }

    /** One local PersistentVolume for the replica's claim. */
    private void createLocalVolume() throws IOException {
        volumeDirectory = Files.createTempDirectory(TestbedFixtures.workDirectory(), "local-pv-");
        volumeName = "qe-it-" + UUID.randomUUID().toString().substring(0, 8);
        TestbedFixtures.createLocalVolume(client, testbed, volumeName, STORAGE_CLASS, volumeDirectory);
    }
}
