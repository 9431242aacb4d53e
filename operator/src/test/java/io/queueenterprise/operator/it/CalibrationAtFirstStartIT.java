package io.queueenterprise.operator.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.operator.OperatorEndpoints;
import io.queueenterprise.kubernetes.testbed.KubernetesTestbed;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.QueueEnterpriseOperator;
import io.queueenterprise.operator.api.Calibration;
import io.queueenterprise.operator.api.CalibrationRequest;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.ReplicaStatus;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.api.StorageSpec;
import io.queueenterprise.operator.model.CalibrationJobModel;
import io.queueenterprise.operator.model.OperatorSettings;

/**
 * Calibration at a replica's first start, on the test bed's REAL API server, scheduler, kubelet (static CPU manager) and
 * containerd: a pinned one-replica QueueCluster with {@code spec.calibration.atFirstStart}; the replica's pod first runs
 * the bench image's real {@code calibrate} as an init container, on the exclusive core the kubelet granted the pod;
 * then the real node starts on that same core and the operator (in this JVM) promotes it. The operator reads the
 * init container's document from the pod's status into {@code status.replicas[0].calibration} and the replica gauge,
 * and says Calibrated True (MeasuredAtFirstStart). The one exclusive core of the test bed is the pod's: the figures are
 * this shared machine's ({@code unreachable} is an honest verdict here), the mechanism is the subject.
 */
@KubernetesTestbed
@org.junit.jupiter.api.Tag("kubernetes")
@org.junit.jupiter.api.Tag("slow")
class CalibrationAtFirstStartIT {
    private static final String CLUSTER = "measured";
    private static final String REPLICA = CLUSTER + "-0";

    private final Testbed testbed;
    private final KubernetesClient client;

    CalibrationAtFirstStartIT(Testbed testbed) {
        this.testbed = testbed;
        this.client = testbed.client();
    }

    @Test
    void theReplicaMeasuresItsOwnCoreBeforeTheNodeStartsAndTheOperatorPublishesIt() throws Exception {
        String benchImage = CalibrationTestbed.importBenchImage(testbed);
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String namespace = "first-start-" + suffix;
        String storageClass = "qe-it-first-start-" + suffix;
        Path volume = createLocalVolume(storageClass);
        TestbedFixtures.installCrd(client);
        CalibrationTestbed.labelTuned(client, testbed, true);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        PrometheusRegistry registry = new PrometheusRegistry();
        OperatorSettings settings = CalibrationTestbed.operatorSettings(testbed, benchImage);
        try (QueueEnterpriseOperator operator = new QueueEnterpriseOperator(client, settings, Set.of(namespace), null, registry);
             OperatorEndpoints metrics = OperatorEndpoints.start("127.0.0.1", 0, registry, () -> true)) {
            operator.start();
            client.resources(QueueCluster.class).inNamespace(namespace).resource(measured(storageClass)).create();

            QueueCluster done = waitForCalibratedLeader(namespace);
            ReplicaStatus replica = done.getStatus().getReplicas().get(0);
            Calibration calibration = replica.getCalibration();
            assertEquals(10L, calibration.getP99TargetMicros());
            assertTrue(List.of("ok", "unreachable", "time-limit").contains(calibration.getVerdict()), calibration.getVerdict());
            // measured on the core the node then ran on: the pod's one exclusive core, never the reserved core 0
            assertTrue(calibration.getGrantedCpus().matches("[1-9][0-9]*"), "one exclusive CPU: " + calibration.getGrantedCpus());
            assertEquals(replica.getCpusAllowedList(), calibration.getGrantedCpus(),
                "the init container's granted core is the node's Cpus_allowed_list");
            assertEquals(List.of(Integer.parseInt(calibration.getGrantedCpus())),
                testbed.podResources().container(namespace, REPLICA, "node").orElseThrow().cpuIds(), "the kubelet's own record");
            Map<String, String> conditions = new TreeMap<>();
            done.getStatus().getConditions().forEach(c -> conditions.put(c.getType(), c.getStatus() + " " + c.getReason()));
            assertEquals("True MeasuredAtFirstStart", conditions.get("Calibrated"), conditions.toString());
            assertEquals("True ExclusiveCores", conditions.get("Pinned"), conditions.toString());
            assertEquals(null, done.getStatus().getCalibration(), "no Job was asked for");
            assertTrue(client.batch().v1().jobs().inNamespace(namespace).list().getItems().isEmpty(), "no Job was run");

            // before serving: the init container finished (exit 0) before the node container started
            Pod pod = client.pods().inNamespace(namespace).withName(REPLICA).get();
            ContainerStatus init = pod.getStatus().getInitContainerStatuses().get(0);
            ContainerStatus node = pod.getStatus().getContainerStatuses().get(0);
            assertEquals(CalibrationJobModel.CONTAINER, init.getName());
            assertEquals(0, init.getState().getTerminated().getExitCode());
            assertTrue(!java.time.Instant.parse(init.getState().getTerminated().getFinishedAt())
                .isAfter(java.time.Instant.parse(node.getState().getRunning().getStartedAt())), pod.getStatus().toString());
            assertEquals("Guaranteed", pod.getStatus().getQosClass());
            System.err.println("[CalibrationAtFirstStartIT] " + REPLICA + ": verdict " + calibration.getVerdict() + ", plain "
                + calibration.getPlainMessagesPerSecond() + ", encrypted " + calibration.getEncryptedMessagesPerSecond()
                + " msg/s at p99 <= 10 us on cpu " + calibration.getGrantedCpus() + ", held bound "
                + calibration.getHeldBoundMicros() + " us");

            String exposition = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + metrics.port() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            String plainSample = "queue_enterprise_replica_calibrated_messages_per_second{cluster=\"" + CLUSTER
                + "\",mode=\"plain\",namespace=\"" + namespace + "\",replica=\"" + REPLICA + "\"}";
            assertEquals(calibration.getPlainMessagesPerSecond() != null, exposition.contains(plainSample),
                "a sample exactly when a plain rate held the bound: " + exposition);
        } finally {
            client.resources(QueueCluster.class).inNamespace(namespace).delete();
            client.pods().inNamespace(namespace).withGracePeriod(0).delete();
            client.namespaces().withName(namespace).delete();
            client.namespaces().withName(namespace).waitUntilCondition(Objects::isNull, 3, TimeUnit.MINUTES);
            client.persistentVolumes().withName(storageClass).delete();
            CalibrationTestbed.labelTuned(client, testbed, false);
            TestbedFixtures.removeCrd(client);
            TestbedFixtures.deleteTree(volume);
        }
    }

    /** The replica's calibration in status, and the node (started after it) leading: Ready. */
    private QueueCluster waitForCalibratedLeader(String namespace) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(8);
        QueueCluster cluster = null;
        while (System.nanoTime() < deadline) {
            cluster = client.resources(QueueCluster.class).inNamespace(namespace).withName(CLUSTER).get();
            if (cluster != null && cluster.getStatus() != null && cluster.getStatus().getReplicas() != null
                && !cluster.getStatus().getReplicas().isEmpty() && cluster.getStatus().getReplicas().get(0).getCalibration() != null
                && cluster.getStatus().getReplicas().get(0).getCpusAllowedList() != null
                && cluster.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()))) {
                return cluster;
            }
            Thread.sleep(1_000);
        }
        Pod pod = client.pods().inNamespace(namespace).withName(REPLICA).get();
        String log;
        try {
            log = client.pods().inNamespace(namespace).withName(REPLICA).inContainer(CalibrationJobModel.CONTAINER).tailingLines(40).getLog();
        } catch (RuntimeException e) {
            log = "(no log: " + e.getMessage() + ")";
        }
        throw new AssertionError("no calibrated, leading replica within 8 min; status: "
            + (cluster == null ? null : client.getKubernetesSerialization().asJson(cluster.getStatus()))
            + "\npod: " + (pod == null ? null : pod.getStatus()) + "\n--- calibrate's log (tail) ---\n" + log);
    }

    /** One local PersistentVolume (named as its storage class) for the claim. */
    private Path createLocalVolume(String storageClass) throws java.io.IOException {
        Path directory = Files.createTempDirectory(TestbedFixtures.workDirectory(), "first-start-pv-");
        TestbedFixtures.createLocalVolume(client, testbed, storageClass, storageClass, directory);
        return directory;
    }

    /** One pinned replica that measures its core at first start (10 s limit), then serves. */
    private static QueueCluster measured(String storageClass) {
        QueueDefinition telemetry = new QueueDefinition();
        telemetry.setName("telemetry");
        telemetry.setRollCycle(RollCycle.FAST_DAILY);
        telemetry.setEncryption(Encryption.NONE);
        QueueClusterSpec spec = new QueueClusterSpec();
        spec.setQueues(new java.util.ArrayList<>(List.of(telemetry)));
        spec.setReplicas(1);
        spec.setPinned(true);
        spec.setCoresPerReplica("1");
        spec.setMemory("2Gi");          // calibrate's subject JVMs and its 512Mi of in-memory queues, then the node
        spec.setSharedMemory("128Mi");  // the node's Aeron
        StorageSpec storage = new StorageSpec();
        storage.setSize("1Gi");
        storage.setStorageClassName(storageClass);
        spec.setStorage(storage);
        CalibrationRequest atFirstStart = new CalibrationRequest();
        atFirstStart.setAtFirstStart(true);
        atFirstStart.setTimeLimitSeconds(10);   // the least the CRD takes: the mechanism is the subject, not the figures
        atFirstStart.setDurationSeconds(1);
        atFirstStart.setWarmupSeconds(1);
        spec.setCalibration(atFirstStart);
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName(CLUSTER).build());
        cluster.setSpec(spec);
        return cluster;
    }
}
