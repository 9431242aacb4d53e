package io.queueenterprise.operator.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.queueenterprise.operator.api.CalibrationRequest;
import io.queueenterprise.operator.api.QueueCluster;

/** The calibration Job a QueueCluster's spec.calibration becomes, without a cluster. */
@org.junit.jupiter.api.Tag("unit")
class CalibrationJobModelTest {
    private static final OperatorSettings SETTINGS = OperatorSettings.defaults().withCalibrationImage("bench:1");

    private static QueueCluster asking(String token) {
        QueueCluster cluster = TestClusters.threeReplicas();
        CalibrationRequest request = new CalibrationRequest();
        request.setRequest(token);
        request.setTimeLimitSeconds(30);
        request.setDurationSeconds(1);
        request.setWarmupSeconds(1);
        cluster.getSpec().setCalibration(request);
        return cluster;
    }

    private static Container container(Job job) {
        return job.getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    @Test
    void noRequestNoJob() {
        assertNull(CalibrationJobModel.job(TestClusters.threeReplicas(), SETTINGS));
    }

    @Test
    void theJobRunsOnTheReplicasPoolWithTheirWholeCoresAsGuaranteedQos() {
        QueueCluster cluster = asking("first");
        Job job = CalibrationJobModel.job(cluster, SETTINGS);
        PodSpec pod = job.getSpec().getTemplate().getSpec();
        PodSpec replicaPod = new QueueClusterModel(cluster, SETTINGS).statefulSet().getSpec().getTemplate().getSpec();
        assertEquals(replicaPod.getNodeSelector(), pod.getNodeSelector(), "same pool, tuned nodes only");
        assertEquals(replicaPod.getTolerations(), pod.getTolerations());
        Map<String, Quantity> requests = container(job).getResources().getRequests();
        assertEquals(requests, container(job).getResources().getLimits(), "Guaranteed QoS: requests = limits");
        assertEquals(replicaPod.getContainers().get(0).getResources().getLimits(), requests, "the replicas' cores and memory");
        assertEquals(new Quantity("2"), requests.get("cpu"));
    }

    @Test
    void theJobIsBoundedAndReportedOnce() {
        Job job = CalibrationJobModel.job(asking("first"), SETTINGS);
        assertEquals(0, job.getSpec().getBackoffLimit(), "a failure is reported, not retried on the pool");
        assertEquals(30L + CalibrationJobModel.DEADLINE_MARGIN_SECONDS, job.getSpec().getActiveDeadlineSeconds());
        assertTrue(job.getSpec().getTtlSecondsAfterFinished() > 0);
        assertEquals("Never", job.getSpec().getTemplate().getSpec().getRestartPolicy());
        assertEquals(List.of("--time-limit", "30", "--duration", "1", "--warmup", "1", "--queue-dir", "/dev/shm",
            "--output", "/dev/termination-log"), container(job).getArgs());
        assertEquals("/dev/termination-log", container(job).getTerminationMessagePath());
        assertEquals("File", container(job).getTerminationMessagePolicy());
        assertEquals("bench:1", container(job).getImage(), "the operator's calibration image");
    }

    @Test
    void theJobMeetsTheRestrictedPodSecurityStandard() {
        Job job = CalibrationJobModel.job(asking("first"), SETTINGS);
        PodSpec pod = job.getSpec().getTemplate().getSpec();
        assertTrue(pod.getSecurityContext().getRunAsNonRoot());
        assertEquals("RuntimeDefault", pod.getSecurityContext().getSeccompProfile().getType());
        var container = container(job).getSecurityContext();
        assertFalse(container.getAllowPrivilegeEscalation());
        assertTrue(container.getReadOnlyRootFilesystem());
        assertEquals(List.of("ALL"), container.getCapabilities().getDrop());
        assertFalse(pod.getAutomountServiceAccountToken(), "calibrate needs no API access");
    }

    @Test
    void thePodIsNotSelectedAsANode() {
        QueueCluster cluster = asking("first");
        Map<String, String> labels = CalibrationJobModel.job(cluster, SETTINGS).getSpec().getTemplate().getMetadata().getLabels();
        Map<String, String> nodeSelector = ClusterNames.of(cluster).selectorLabels();
        assertFalse(labels.entrySet().containsAll(nodeSelector.entrySet()),
            "the StatefulSet, PDB and NetworkPolicy select node pods; the calibration pod is none: " + labels);
        assertEquals("first", labels.get(CalibrationJobModel.REQUEST_LABEL));
    }

    @Test
    void aNewTokenIsANewJobTheSameTokenTheSameJob() {
        String first = CalibrationJobModel.job(asking("first"), SETTINGS).getMetadata().getName();
        assertEquals(first, CalibrationJobModel.job(asking("first"), SETTINGS).getMetadata().getName());
        assertNotEquals(first, CalibrationJobModel.job(asking("second"), SETTINGS).getMetadata().getName());
        String longToken = "a".repeat(63);
        assertTrue(CalibrationJobModel.job(asking(longToken), SETTINGS).getMetadata().getName().length() <= 63);
    }

    private static QueueCluster atFirstStart() {
        QueueCluster cluster = TestClusters.threeReplicas();
        CalibrationRequest request = new CalibrationRequest();
        request.setAtFirstStart(true);
        request.setTimeLimitSeconds(40);
        request.setDurationSeconds(1);
        request.setWarmupSeconds(1);
        cluster.getSpec().setCalibration(request);
        return cluster;
    }

    @Test
    void atFirstStartAloneRunsNoJob() {
        assertNull(CalibrationJobModel.job(atFirstStart(), SETTINGS), "measured in the replicas' own pods instead");
    }

    @Test
    void atFirstStartEachReplicaPodCalibratesItsOwnCoresBeforeTheNodeStarts() {
        QueueCluster cluster = atFirstStart();
        PodSpec pod = new QueueClusterModel(cluster, SETTINGS).statefulSet().getSpec().getTemplate().getSpec();
        assertEquals(1, pod.getInitContainers().size());
        Container calibrate = pod.getInitContainers().get(0);
        Container node = pod.getContainers().get(0);
        assertEquals(CalibrationJobModel.CONTAINER, calibrate.getName());
        assertEquals("bench:1", calibrate.getImage());
        // the node's own resources, requests = limits: the static CPU manager grants the init container the pod's
        // exclusive cores, which the node container then gets (the pod stays Guaranteed, its request unchanged)
        assertEquals(node.getResources().getLimits(), calibrate.getResources().getLimits());
        assertEquals(calibrate.getResources().getLimits(), calibrate.getResources().getRequests());
        assertEquals(List.of("--time-limit", "40", "--duration", "1", "--warmup", "1", "--queue-dir", "/dev/shm",
            "--output", "/dev/termination-log"), calibrate.getArgs());
        assertEquals("/dev/termination-log", calibrate.getTerminationMessagePath());
        assertEquals("File", calibrate.getTerminationMessagePolicy(), "the document, not a log tail");
        assertTrue(calibrate.getSecurityContext().getReadOnlyRootFilesystem());
        assertFalse(calibrate.getSecurityContext().getAllowPrivilegeEscalation());
        assertEquals(List.of("ALL"), calibrate.getSecurityContext().getCapabilities().getDrop());
        // its queues in a memory volume of its own (empty again after each run), never the node's data or /dev/shm
        assertEquals(Map.of(CalibrationJobModel.FIRST_START_QUEUES_VOLUME, "/dev/shm", "tmp", "/tmp"),
            calibrate.getVolumeMounts().stream().collect(java.util.stream.Collectors.toMap(m -> m.getName(), m -> m.getMountPath())));
        var queues = pod.getVolumes().stream().filter(v -> v.getName().equals(CalibrationJobModel.FIRST_START_QUEUES_VOLUME))
            .findFirst().orElseThrow();
        assertEquals("Memory", queues.getEmptyDir().getMedium());
    }

    @Test
    void withoutAtFirstStartTheReplicaPodHasNoInitContainer() {
        for (QueueCluster cluster : List.of(TestClusters.threeReplicas(), asking("first"))) {
            PodSpec pod = new QueueClusterModel(cluster, SETTINGS).statefulSet().getSpec().getTemplate().getSpec();
            assertTrue(pod.getInitContainers().isEmpty(), "a Job's calibration never runs in a serving pod");
            assertTrue(pod.getVolumes().stream().noneMatch(v -> v.getName().equals(CalibrationJobModel.FIRST_START_QUEUES_VOLUME)));
        }
    }
}
