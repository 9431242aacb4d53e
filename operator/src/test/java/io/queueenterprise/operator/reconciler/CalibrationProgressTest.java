package io.queueenterprise.operator.reconciler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.queueenterprise.operator.api.CalibrationStatus;
import io.queueenterprise.operator.model.CalibrationJobModel;

/** status.calibration and the Calibrated condition from a calibration Job and its pod, as the API server reports them. */
@org.junit.jupiter.api.Tag("unit")
class CalibrationProgressTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static String example(boolean measured) throws Exception {
        String page = Files.readString(Path.of(System.getProperty("qe.examples.dir", "../examples"), "..", "docs",
            "calibration-json-schema.md"));
        Matcher json = Pattern.compile("```json\\n(.*?)```", Pattern.DOTALL).matcher(page);
        assertTrue(json.find());
        ObjectNode document = (ObjectNode) JSON.readTree(json.group(1));
        if (measured) {
            for (String subject : List.of("plain", "ctr", "ctr-poly1305")) {
                ((ObjectNode) document.at("/subjects/" + subject)).put("status", "ok").put("rate", 400_000);
            }
            ((ObjectNode) document.at("/subjects/ctr-poly1305")).put("rate", 150_000);
            document.put("verdict", "ok");
        }
        return JSON.writeValueAsString(document);
    }

    private static Job job(String condition, String reason) {
        JobBuilder job = new JobBuilder().withNewMetadata().withName("c-calibrate-1").endMetadata();
        if (condition != null) {
            job.withNewStatus().addNewCondition().withType(condition).withStatus("True").withReason(reason).endCondition().endStatus();
        }
        return job.build();
    }

    private static Pod terminated(int exitCode, String message) {
        return new PodBuilder().withNewMetadata().withName("c-calibrate-1-x").endMetadata()
            .withNewStatus().addNewContainerStatus().withName(CalibrationJobModel.CONTAINER)
                .withNewState().withNewTerminated().withExitCode(exitCode).withMessage(message).endTerminated().endState()
            .endContainerStatus().endStatus().build();
    }

    @Test
    void aCompletedJobPublishesTheFiguresOfItsTerminationMessage() throws Exception {
        CalibrationStatus status = CalibrationProgress.observe("t1", "c-calibrate-1", job("Complete", null),
            List.of(terminated(0, example(true))));
        assertEquals(CalibrationStatus.Phase.Succeeded, status.getPhase());
        assertEquals(400_000L, status.getResult().getPlainMessagesPerSecond());
        assertEquals(150_000L, status.getResult().getEncryptedMessagesPerSecond());
        Condition calibrated = CalibrationProgress.condition(status, 3);
        assertEquals("True", calibrated.getStatus());
        assertEquals("Measured", calibrated.getReason());
    }

    @Test
    void anUnreachableBoundIsAResultNotAFailure() throws Exception {
        CalibrationStatus status = CalibrationProgress.observe("t1", "c-calibrate-1", job("Complete", null),
            List.of(terminated(0, example(false))));
        assertEquals(CalibrationStatus.Phase.Succeeded, status.getPhase());
        assertNull(status.getResult().getPlainMessagesPerSecond());
        assertEquals("unreachable", status.getResult().getVerdict());
        assertEquals("BoundUnreachable", CalibrationProgress.condition(status, 3).getReason());
    }

    @Test
    void aJobPastItsDeadlineOrFailedSaysWhy() {
        CalibrationStatus late = CalibrationProgress.observe("t1", "c-calibrate-1", job("Failed", "DeadlineExceeded"), List.of());
        assertEquals(CalibrationStatus.Phase.Failed, late.getPhase());
        assertEquals(CalibrationProgress.DEADLINE_EXCEEDED, late.getReason());
        Condition calibrated = CalibrationProgress.condition(late, 3);
        assertEquals("False", calibrated.getStatus());
        assertEquals("DeadlineExceeded", calibrated.getReason());

        CalibrationStatus failed = CalibrationProgress.observe("t1", "c-calibrate-1", job("Failed", "BackoffLimitExceeded"),
            List.of(terminated(2, "")));
        assertEquals(CalibrationProgress.JOB_FAILED, failed.getReason());
        assertTrue(failed.getMessage().contains("exited 2"), failed.getMessage());
    }

    @Test
    void aCompletedJobWithoutAValidDocumentIsRefused() {
        CalibrationStatus status = CalibrationProgress.observe("t1", "c-calibrate-1", job("Complete", null),
            List.of(terminated(0, "{\"schema\":\"qe-calibration/1\"")));
        assertEquals(CalibrationStatus.Phase.Failed, status.getPhase());
        assertEquals(CalibrationProgress.INVALID_RESULT, status.getReason());
        assertTrue(status.getMessage().contains("not JSON"), status.getMessage());
        assertNull(status.getResult());
    }

    @Test
    void aRunningOrJustCreatedJobIsInProgress() {
        assertEquals(CalibrationStatus.Phase.Running, CalibrationProgress.observe("t1", "c-calibrate-1", null, List.of()).getPhase());
        CalibrationStatus running = CalibrationProgress.observe("t1", "c-calibrate-1", job(null, null), List.of());
        assertEquals(CalibrationStatus.Phase.Running, running.getPhase());
        assertEquals("Unknown", CalibrationProgress.condition(running, 3).getStatus());
        assertEquals("NotRequested", CalibrationProgress.condition(null, 3).getReason());
    }

    private static Pod replicaPod(String state, int exitCode, String message) {
        var container = new io.fabric8.kubernetes.api.model.ContainerStatusBuilder().withName(CalibrationJobModel.CONTAINER);
        if ("running".equals(state)) {
            container.withNewState().withNewRunning().endRunning().endState();
        } else {
            container.withNewState().withNewTerminated().withExitCode(exitCode).withMessage(message).endTerminated().endState();
        }
        return new PodBuilder().withNewMetadata().withName("c-0").endMetadata()
            .withNewStatus().withInitContainerStatuses(container.build()).endStatus().build();
    }

    @Test
    void aReplicaPodsFirstStartCalibrationIsReadFromItsInitContainersTerminationMessage() throws Exception {
        var figures = CalibrationProgress.firstStart(replicaPod("terminated", 0, example(true)));
        assertEquals("ok", figures.getVerdict());
        assertEquals(400_000L, figures.getPlainMessagesPerSecond());
        assertEquals(150_000L, figures.getEncryptedMessagesPerSecond());
        assertNull(CalibrationProgress.firstStart(replicaPod("running", 0, null)), "still measuring");
        assertNull(CalibrationProgress.firstStart(replicaPod("terminated", 1, "boom")), "failed: the kubelet runs it again");
        assertNull(CalibrationProgress.firstStart(new PodBuilder().withNewMetadata().withName("c-0").endMetadata()
            .withNewStatus().endStatus().build()), "no init container: not asked");
        assertNull(CalibrationProgress.firstStart(null));
        var refused = org.junit.jupiter.api.Assertions.assertThrows(
            io.queueenterprise.operator.failover.CalibrationReading.InvalidCalibrationException.class,
            () -> CalibrationProgress.firstStart(replicaPod("terminated", 0, "{\"schema\":\"other/1\"}")));
        assertTrue(refused.getMessage().contains("schema"), refused.getMessage());
    }

    @Test
    void atFirstStartIsCalibratedOnceEveryReplicaMeasured() {
        Condition partial = CalibrationProgress.firstStartCondition(2, 3, 4);
        assertEquals("Unknown", partial.getStatus());
        assertEquals("AwaitingReplicas", partial.getReason());
        assertTrue(partial.getMessage().startsWith("2 of 3"), partial.getMessage());
        Condition all = CalibrationProgress.firstStartCondition(3, 3, 4);
        assertEquals("True", all.getStatus());
        assertEquals("MeasuredAtFirstStart", all.getReason());
    }
}
