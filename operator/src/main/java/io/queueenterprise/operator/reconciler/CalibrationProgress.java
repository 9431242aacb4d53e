package io.queueenterprise.operator.reconciler;

import java.util.List;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.queueenterprise.operator.api.Calibration;
import io.queueenterprise.operator.api.CalibrationStatus;
import io.queueenterprise.operator.failover.CalibrationReading;
import io.queueenterprise.operator.model.CalibrationJobModel;

/**
 * What a calibration Job's state means for {@code status.calibration} (pure: the reconciler fetches the Job and its
 * pod): Running until the Job finishes; Succeeded with the figures of the pod's termination message once it is
 * Complete and the message is a valid qe-calibration/1 document; Failed with a reason otherwise.
 */
public final class CalibrationProgress {
    public static final String CALIBRATED = "Calibrated";
    public static final String JOB_FAILED = "JobFailed";
    public static final String DEADLINE_EXCEEDED = "DeadlineExceeded";
    public static final String INVALID_RESULT = "InvalidResult";

    private CalibrationProgress() {
    }

    /** @param job null when it does not exist (yet, or any more); pods: the Job's pods, any order */
    public static CalibrationStatus observe(String request, String jobName, Job job, List<Pod> pods) {
        CalibrationStatus status = new CalibrationStatus();
        status.setRequest(request);
        status.setJob(jobName);
        status.setPhase(CalibrationStatus.Phase.Running);
        if (job == null) {
            status.setMessage("calibration Job " + jobName + " created");
            return status;
        }
        JobCondition failed = condition(job, "Failed");
        if (failed != null) {
            status.setPhase(CalibrationStatus.Phase.Failed);
            status.setReason(DEADLINE_EXCEEDED.equals(failed.getReason()) ? DEADLINE_EXCEEDED : JOB_FAILED);
            ContainerStateTerminated terminated = terminated(pods);
            String detail = terminated == null ? "" : "; container exited " + terminated.getExitCode()
                + (terminated.getReason() == null ? "" : " (" + terminated.getReason() + ")");
            status.setMessage("calibration Job " + jobName + " failed: " + failed.getReason()
                + (failed.getMessage() == null ? "" : " " + failed.getMessage()) + detail);
            return status;
        }
        if (condition(job, "Complete") == null) {
            status.setMessage("calibration Job " + jobName + " is running");
            return status;
        }
        ContainerStateTerminated terminated = terminated(pods);
        try {
            Calibration result = CalibrationReading.parse(terminated == null ? null : terminated.getMessage());
            status.setPhase(CalibrationStatus.Phase.Succeeded);
            status.setResult(result);
            status.setMessage("verdict " + result.getVerdict() + " on cpus " + result.getGrantedCpus());
        } catch (CalibrationReading.InvalidCalibrationException e) {
            status.setPhase(CalibrationStatus.Phase.Failed);
            status.setReason(INVALID_RESULT);
            status.setMessage("calibration Job " + jobName + " completed but its result is refused: " + e.getMessage());
        }
        return status;
    }

    /** The Calibrated condition: True with figures, False when asked and failed or never asked, Unknown while running. */
    public static Condition condition(CalibrationStatus calibration, long generation) {
        if (calibration == null) {
            return Conditions.of(CALIBRATED, false, "NotRequested", "spec.calibration asks for no calibration", generation);
        }
        return switch (calibration.getPhase()) {
            case Running -> Conditions.unknown(CALIBRATED, "InProgress", calibration.getMessage(), generation);
            case Failed -> Conditions.of(CALIBRATED, false, calibration.getReason(), calibration.getMessage(), generation);
            case Succeeded -> Conditions.of(CALIBRATED, true, verdictReason(calibration.getResult().getVerdict()),
                calibration.getMessage(), generation);
        };
    }

    /**
     * A replica pod's own calibration ({@code atFirstStart}): the termination message of its {@code calibrate} init
     * container once that exited 0, validated as a Job's is. Null while it has not finished (or the pod has none).
     */
    public static Calibration firstStart(Pod pod) throws CalibrationReading.InvalidCalibrationException {
        if (pod == null || pod.getStatus() == null || pod.getStatus().getInitContainerStatuses() == null) {
            return null;
        }
        for (ContainerStatus container : pod.getStatus().getInitContainerStatuses()) {
            if (CalibrationJobModel.CONTAINER.equals(container.getName()) && container.getState() != null
                && container.getState().getTerminated() != null
                && Integer.valueOf(0).equals(container.getState().getTerminated().getExitCode())) {
                return CalibrationReading.parse(container.getState().getTerminated().getMessage());
            }
        }
        return null;
    }

    /**
     * The Calibrated condition when only {@code atFirstStart} is asked (no Job): True once every replica's pod
     * published its figures, Unknown before.
     */
    public static Condition firstStartCondition(int measured, int replicas, long generation) {
        String message = measured + " of " + replicas + " replicas measured their cores at first start";
        return measured >= replicas
            ? Conditions.of(CALIBRATED, true, "MeasuredAtFirstStart", message, generation)
            : Conditions.unknown(CALIBRATED, "AwaitingReplicas", message, generation);
    }

    /** ok -> Measured, unreachable -> BoundUnreachable, time-limit -> TimeLimitReached: a CamelCase condition reason. */
    private static String verdictReason(String verdict) {
        return switch (verdict) {
            case "unreachable" -> "BoundUnreachable";
            case "time-limit" -> "TimeLimitReached";
            default -> "Measured";
        };
    }

    private static JobCondition condition(Job job, String type) {
        if (job.getStatus() == null || job.getStatus().getConditions() == null) {
            return null;
        }
        return job.getStatus().getConditions().stream()
            .filter(c -> type.equals(c.getType()) && "True".equals(c.getStatus())).findFirst().orElse(null);
    }

    private static ContainerStateTerminated terminated(List<Pod> pods) {
        for (Pod pod : pods) {
            if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
                continue;
            }
            for (ContainerStatus container : pod.getStatus().getContainerStatuses()) {
                if (CalibrationJobModel.CONTAINER.equals(container.getName()) && container.getState() != null
                    && container.getState().getTerminated() != null) {
                    return container.getState().getTerminated();
                }
            }
        }
        return null;
    }
}
