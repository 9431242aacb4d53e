package io.queueenterprise.operator.model;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.queueenterprise.operator.api.CalibrationRequest;
import io.queueenterprise.operator.api.NodePool;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;

/**
 * The calibration Job of a QueueCluster's {@code spec.calibration} (pure, no client): one pod on the replicas' pool
 * (same node selector and tolerations) with the replicas' whole cores and memory, requests = limits, so that the
 * static CPU manager grants it exclusive cores as it does a replica; it runs the bench's {@code calibrate} there and
 * writes its one JSON document (at most 4 KiB) to the termination-message file, where the operator reads it back.
 * A separate pod, never a serving one: calibrate saturates its cores.
 */
public final class CalibrationJobModel {
    public static final String CONTAINER = "calibrate";
    public static final String COMPONENT = "calibration";
    /** The pods' name label: deliberately not the nodes' ({@code queue-enterprise}), whose selectors must not match it. */
    public static final String APP = "queue-enterprise-calibration";
    public static final String REQUEST_LABEL = "queue-enterprise.io/calibration-request";
    public static final String TERMINATION_MESSAGE_PATH = "/dev/termination-log";
    /** Above calibrate's time limit: JVM starts, warm-ups, the measurement under way at the limit, the image's start. */
    static final int DEADLINE_MARGIN_SECONDS = 180;
    /** A calibration that fails once is reported, not retried on the pool: a retry would measure a disturbed pool. */
    static final int BACKOFF_LIMIT = 0;
    /** Finished Jobs go after a day; the figures live on in the QueueCluster's status. */
    static final int TTL_SECONDS_AFTER_FINISHED = 86_400;
    static final String QUEUE_SIZE = "512Mi";

    private CalibrationJobModel() {
    }

    /** Null when the spec asks for no calibration Job (no calibration, or only {@code atFirstStart}). */
    public static Job job(QueueCluster cluster, OperatorSettings settings) {
        QueueClusterSpec spec = cluster.getSpec();
        CalibrationRequest request = spec.getCalibration();
        if (request == null || request.getRequest() == null) {
            return null;
        }
        ClusterNames names = ClusterNames.of(cluster);
        NodePool pool = spec.getNodePool() != null ? spec.getNodePool() : new NodePool();
        QueueClusterModel model = new QueueClusterModel(cluster, settings);
        Map<String, Quantity> resources = new LinkedHashMap<>();
        resources.put("cpu", new Quantity(spec.getCoresPerReplica()));
        resources.put("memory", new Quantity(spec.getMemory()));
        String image = request.getImage() != null ? request.getImage() : settings.calibrationImage();
        return new JobBuilder()
            .withNewMetadata().withName(jobName(names, request.getRequest())).withNamespace(names.namespace())
                .withLabels(labels(names, request.getRequest())).endMetadata()
            .withNewSpec()
                .withBackoffLimit(BACKOFF_LIMIT)
                .withActiveDeadlineSeconds((long) request.getTimeLimitSeconds() + DEADLINE_MARGIN_SECONDS)
                .withTtlSecondsAfterFinished(TTL_SECONDS_AFTER_FINISHED)
                .withNewTemplate()
                    .withNewMetadata().withLabels(labels(names, request.getRequest())).endMetadata()
                    .withNewSpec()
                        .withRestartPolicy("Never")
                        .withAutomountServiceAccountToken(false)
                        .withEnableServiceLinks(false)
                        .withNodeSelector(model.nodeSelector(pool))
                        .withTolerations(pool.getTolerations())
                        .withNewSecurityContext()
                            .withRunAsNonRoot(true).withRunAsUser(QueueClusterModel.NODE_USER)
                            .withRunAsGroup(QueueClusterModel.NODE_USER).withFsGroup(QueueClusterModel.NODE_USER)
                            .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
                        .endSecurityContext()
                        .addNewContainer()
                            .withName(CONTAINER)
                            .withImage(image)
                            .withImagePullPolicy(settings.imagePullPolicy())
                            .withArgs(arguments(request))
                            .withTerminationMessagePath(TERMINATION_MESSAGE_PATH)
                            // the document is in the file; a log tail (progress lines) would not parse
                            .withTerminationMessagePolicy("File")
                            .withNewResources().withRequests(resources).withLimits(resources).endResources()
                            .withNewSecurityContext()
                                .withAllowPrivilegeEscalation(false)
                                .withReadOnlyRootFilesystem(true)
                                .withRunAsNonRoot(true)
                                .withNewCapabilities().withDrop("ALL").endCapabilities()
                                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
                            .endSecurityContext()
                            .withVolumeMounts(
                                new VolumeMountBuilder().withName("shm").withMountPath("/dev/shm").build(),
                                new VolumeMountBuilder().withName("tmp").withMountPath("/tmp").build())
                        .endContainer()
                        .withVolumes(
                            // the measured queues live in memory, as on a tuned node (counted against the pod's limit)
                            new VolumeBuilder().withName("shm").withNewEmptyDir().withMedium("Memory")
                                .withSizeLimit(new Quantity(QUEUE_SIZE)).endEmptyDir().build(),
                            new VolumeBuilder().withName("tmp").withNewEmptyDir().withSizeLimit(new Quantity("64Mi"))
                                .endEmptyDir().build())
                    .endSpec()
                .endTemplate()
            .endSpec().build();
    }

    /** The queues calibrate writes at first start: a memory-backed volume of the replica's pod, empty again after each run. */
    public static final String FIRST_START_QUEUES_VOLUME = "calibration-queues";

    /** Whether a replica's pod measures its own cores before its node starts ({@code spec.calibration.atFirstStart}). */
    public static boolean atFirstStart(QueueClusterSpec spec) {
        return spec.getCalibration() != null && Boolean.TRUE.equals(spec.getCalibration().getAtFirstStart());
    }

    /**
     * The init container of a replica's pod with {@code atFirstStart}: calibrate with the node container's resources
     * (requests = limits: the static CPU manager grants it the pod's exclusive cores, which the node container then
     * gets), so it measures exactly the cores the node will run on, before the node starts; its document is the
     * container's termination message, which the operator reads from the pod's status. calibrate ends by itself at its
     * time limit (no new measurement starts after it).
     */
    public static Container firstStartContainer(QueueClusterSpec spec, OperatorSettings settings, Map<String, Quantity> resources) {
        CalibrationRequest request = spec.getCalibration();
        return new ContainerBuilder()
            .withName(CONTAINER)
            .withImage(request.getImage() != null ? request.getImage() : settings.calibrationImage())
            .withImagePullPolicy(settings.imagePullPolicy())
            .withArgs(arguments(request))
            .withTerminationMessagePath(TERMINATION_MESSAGE_PATH)
            .withTerminationMessagePolicy("File")
            .withNewResources().withRequests(resources).withLimits(resources).endResources()
            .withNewSecurityContext()
                .withAllowPrivilegeEscalation(false)
                .withReadOnlyRootFilesystem(true)
                .withRunAsNonRoot(true)
                .withNewCapabilities().withDrop("ALL").endCapabilities()
                .withNewSeccompProfile().withType("RuntimeDefault").endSeccompProfile()
            .endSecurityContext()
            .withVolumeMounts(
                new VolumeMountBuilder().withName(FIRST_START_QUEUES_VOLUME).withMountPath("/dev/shm").build(),
                new VolumeMountBuilder().withName("tmp").withMountPath("/tmp").build())
            .build();
    }

    /** The volume of {@link #firstStartContainer}'s queues: its own, so that the node's /dev/shm size stays the node's. */
    public static Volume firstStartQueuesVolume() {
        return new VolumeBuilder().withName(FIRST_START_QUEUES_VOLUME).withNewEmptyDir().withMedium("Memory")
            .withSizeLimit(new Quantity(QUEUE_SIZE)).endEmptyDir().build();
    }

    /** What the bench image's entrypoint ({@code BenchTool calibrate}) gets: the bounds of the request, the document's file. */
    static List<String> arguments(CalibrationRequest request) {
        return List.of(
            "--time-limit", Integer.toString(request.getTimeLimitSeconds()),
            "--duration", Integer.toString(request.getDurationSeconds()),
            "--warmup", Integer.toString(request.getWarmupSeconds()),
            "--queue-dir", "/dev/shm",
            "--output", TERMINATION_MESSAGE_PATH);
    }

    public static Map<String, String> labels(ClusterNames names, String request) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(ClusterNames.LABEL_NAME, APP);
        labels.put(ClusterNames.LABEL_INSTANCE, names.cluster());
        labels.put(ClusterNames.LABEL_COMPONENT, COMPONENT);
        labels.put(ClusterNames.LABEL_MANAGED_BY, ClusterNames.MANAGER);
        labels.put(REQUEST_LABEL, request);
        return labels;
    }

    /**
     * {@code <cluster>-calibrate-<8 hex of the request>}: one name per request (a new token, a new Job; the same token
     * finds its Job again after an operator restart), short whatever the token's length.
     */
    public static String jobName(ClusterNames names, String request) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(request.getBytes(StandardCharsets.UTF_8));
            return names.cluster() + "-calibrate-" + java.util.HexFormat.of().formatHex(digest, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JDK", e);
        }
    }
}
