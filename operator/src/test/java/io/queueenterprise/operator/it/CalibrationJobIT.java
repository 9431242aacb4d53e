package io.queueenterprise.operator.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.operator.OperatorEndpoints;
import io.queueenterprise.kubernetes.testbed.KubernetesTestbed;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.QueueEnterpriseOperator;
import io.queueenterprise.operator.api.Calibration;
import io.queueenterprise.operator.api.CalibrationRequest;
import io.queueenterprise.operator.api.CalibrationStatus;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.api.StorageSpec;
import io.queueenterprise.operator.model.CalibrationJobModel;
import io.queueenterprise.operator.model.ClusterNames;
import io.queueenterprise.operator.model.OperatorSettings;

/**
 * The calibration Job on the test bed's REAL API server, scheduler, kubelet (static CPU manager) and containerd: a
 * pinned QueueCluster asks for calibration; the operator (in this JVM) creates the Job; the kubelet grants its pod
 * the one exclusive core; the pod runs the real {@code calibrate} of the bench image ({@code build-image.sh bench})
 * and leaves its document as the termination message; the operator validates it and writes the figures into status
 * and onto its Prometheus endpoint.
 * <p>
 * The test bed has ONE exclusive core (2 CPUs, core 0 reserved): the replica and the Job cannot both hold a core, so
 * the replica's volume claim names a storage class with no volume and the replica stays Pending (calibration before
 * serving). One core means calibrate runs producer and consumer unpinned on it, with the other CPU's load (this build)
 * beside it: the figures are this machine's, not a tuned node's; {@code unreachable} is an honest verdict here.
 */
@KubernetesTestbed
@org.junit.jupiter.api.Tag("kubernetes")
@org.junit.jupiter.api.Tag("slow")
class CalibrationJobIT {

    private final Testbed testbed;
    private final KubernetesClient client;

    CalibrationJobIT(Testbed testbed) {
        this.testbed = testbed;
        this.client = testbed.client();
    }

    @Test
    void theJobRunsCalibrateOnTheGrantedCoreAndTheOperatorPublishesItsFigures() throws Exception {
        String benchImage = CalibrationTestbed.importBenchImage(testbed);
        String namespace = "calibration-" + UUID.randomUUID().toString().substring(0, 8);
        TestbedFixtures.installCrd(client);
        CalibrationTestbed.labelTuned(client, testbed, true);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        PrometheusRegistry registry = new PrometheusRegistry();
        OperatorSettings settings = CalibrationTestbed.operatorSettings(testbed, benchImage);
        try (QueueEnterpriseOperator operator = new QueueEnterpriseOperator(client, settings, Set.of(namespace), null, registry);
             OperatorEndpoints metrics = OperatorEndpoints.start("127.0.0.1", 0, registry, () -> true)) {
            operator.start();
            client.resources(QueueCluster.class).inNamespace(namespace).resource(calibrated()).create();

            QueueCluster done = client.resources(QueueCluster.class).inNamespace(namespace).withName("measured")
                .waitUntilCondition(c -> c != null && c.getStatus() != null && c.getStatus().getCalibration() != null
                    && c.getStatus().getCalibration().getPhase() != CalibrationStatus.Phase.Running, 8, TimeUnit.MINUTES);
            CalibrationStatus calibration = done.getStatus().getCalibration();
            String jobName = CalibrationJobModel.jobName(new ClusterNames("measured", namespace), "it");
            assertEquals(jobName, calibration.getJob());
            if (calibration.getPhase() != CalibrationStatus.Phase.Succeeded) {
                Pod pod = pod(namespace, jobName);
                String log = client.pods().inNamespace(namespace).withName(pod.getMetadata().getName()).tailingLines(40).getLog();
                throw new AssertionError("calibration " + calibration.getPhase() + " " + calibration.getReason() + ": "
                    + calibration.getMessage() + "\n--- the calibrate container's log (tail) ---\n" + log);
            }
            Calibration result = calibration.getResult();
            assertEquals(10L, result.getP99TargetMicros());
            assertTrue(List.of("ok", "unreachable", "time-limit").contains(result.getVerdict()), result.getVerdict());
            // the one exclusive core the kubelet granted: one CPU, never the reserved core 0
            assertNotNull(result.getGrantedCpus());
            assertTrue(result.getGrantedCpus().matches("[0-9]+"), "one CPU: " + result.getGrantedCpus());
            assertNotEquals("0", result.getGrantedCpus(), "core 0 is the kubelet's reserved core");
            System.err.println("[CalibrationJobIT] status.calibration: verdict " + result.getVerdict() + ", plain "
                + result.getPlainMessagesPerSecond() + ", encrypted " + result.getEncryptedMessagesPerSecond()
                + " msg/s at p99 <= 10 us on cpu " + result.getGrantedCpus() + ", held bound " + result.getHeldBoundMicros() + " us");

            Map<String, String> conditions = new java.util.TreeMap<>();
            done.getStatus().getConditions().forEach(c -> conditions.put(c.getType(), c.getStatus() + " " + c.getReason()));
            assertTrue(conditions.get("Calibrated").startsWith("True "), conditions.toString());

            Job job = client.batch().v1().jobs().inNamespace(namespace).withName(jobName).get();
            assertEquals("Guaranteed", pod(namespace, jobName).getStatus().getQosClass());
            assertTrue(job.getMetadata().getOwnerReferences().stream().anyMatch(o -> "QueueCluster".equals(o.getKind())));

            String exposition = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + metrics.port() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            String labels = "cluster=\"measured\",namespace=\"" + namespace + "\"";
            assertTrue(exposition.contains("queue_enterprise_cluster_calibration_verdict{" + labels + ",verdict=\""
                + result.getVerdict() + "\"} 1.0"), exposition);
            if (result.getPlainMessagesPerSecond() != null) {
                assertTrue(exposition.contains("queue_enterprise_cluster_calibrated_messages_per_second{" + labels
                    + ",mode=\"plain\"}"), exposition);
            } else {
                assertTrue(!exposition.contains("queue_enterprise_cluster_calibrated_messages_per_second{" + labels
                    + ",mode=\"plain\"}"), "no rate held the bound: no sample, not a zero");
            }
        } finally {
            client.namespaces().withName(namespace).delete();
            client.namespaces().withName(namespace).waitUntilCondition(java.util.Objects::isNull, 3, TimeUnit.MINUTES);
            CalibrationTestbed.labelTuned(client, testbed, false);
            TestbedFixtures.removeCrd(client);
        }
    }

    private Pod pod(String namespace, String jobName) {
        return client.pods().inNamespace(namespace).withLabel("job-name", jobName).list().getItems().get(0);
    }

    /** One pinned replica whose claim no volume can bind (it stays Pending: the core is the Job's) asking for calibration. */
    private static QueueCluster calibrated() {
        QueueDefinition telemetry = new QueueDefinition();
        telemetry.setName("telemetry");
        telemetry.setRollCycle(RollCycle.FAST_DAILY);
        telemetry.setEncryption(Encryption.NONE);
        QueueClusterSpec spec = new QueueClusterSpec();
        spec.setQueues(new java.util.ArrayList<>(List.of(telemetry)));
        spec.setReplicas(1);
        spec.setPinned(true);
        spec.setCoresPerReplica("1");
        spec.setMemory("2Gi");
        spec.setSharedMemory("64Mi");
        StorageSpec storage = new StorageSpec();
        storage.setSize("1Gi");
        storage.setStorageClassName("qe-it-no-volume");
        spec.setStorage(storage);
        CalibrationRequest request = new CalibrationRequest();
        request.setRequest("it");
        request.setTimeLimitSeconds(10);   // the least the CRD takes: the mechanism is the subject, not the figures
        request.setDurationSeconds(1);
        request.setWarmupSeconds(1);
        spec.setCalibration(request);
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName("measured").build());
        cluster.setSpec(spec);
        return cluster;
    }
}
