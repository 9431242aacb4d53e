package io.queueenterprise.remote;

import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.queue.QueueAppender;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RemoteQueue}'s write ({@link AppendMachine}) against {@link FakeNodes}, which plays the nodes on a clock the
 * test owns (each poll is 1 ms): acknowledgement, a lost APPEND resent, a lost answer resent and deduplicated, a
 * redirect, a failover to another node under the same writer epoch and sequence, and the back-pressure and ack
 * timeouts with their typed errors. No media driver, no sleep.
 */
@Tag("unit")
class AppendMachineTest extends FakeNodesFixture {
    @Test
    void afterAWriteFailsTheNextGoesUnderANewEpochAndAConnectionWhoseClaimsAreSpentIsReplaced() {
        try (RemoteQueue queue = connect(); QueueAppender appender = queue.createAppender()) {
            assertEquals(1000, appender.write(bytes("one")));
            a.refuseAppends = ClientRefusal.REPLAYED; // not retryable: each write fails, nothing appended
            for (int i = 0; i < 12; i++) {
                RemoteQueueException e = assertThrows(RemoteQueueException.class, () -> appender.write(bytes("refused")));
                assertEquals(ClientRefusal.REPLAYED, e.refusal(), e.getMessage());
            }
            a.refuseAppends = null;
            assertEquals(1001, appender.write(bytes("two")));
            List<FakeNodes.Arrival> arrivals = nodes.arrivals;
            assertEquals(14, arrivals.size());
            assertEquals(arrivals.get(0).epoch(), arrivals.get(1).epoch(), "the first failed write was the epoch's second");
            assertEquals(1, arrivals.get(1).writerSequence());
            assertEquals(13, arrivals.stream().map(FakeNodes.Arrival::epoch).distinct().count(),
                    "a new epoch after every failed write");
            assertTrue(arrivals.subList(2, 14).stream().allMatch(x -> x.writerSequence() == 0), "each from sequence 0");
        }
    }

    @Test
    void aPlainAppendIsAcknowledgedWithTheNodesIndex() {
        try (RemoteQueue queue = connect(); QueueAppender appender = queue.createAppender()) {
            assertEquals(41001, queue.connectedNode().getPort(), "connected to the leader");
            assertEquals(1000, appender.write(bytes("one")));
            assertEquals(1001, appender.write(bytes("two")));
            AppendMachine m = queue.appendMachine();
            assertEquals(AppendMachine.State.IDLE, m.state());
            assertEquals(2, m.sends());
            assertEquals(0, m.resends());
            assertEquals(2, nodes.appended);
            assertEquals(List.of(0, 1), nodes.arrivals.stream().map(FakeNodes.Arrival::writerSequence).toList());
        }
    }

    @Test
    void aLostAppendIsResentAfterTheResendIntervalWithTheSameWriterSequence() {
        try (RemoteQueue queue = connect(); QueueAppender appender = queue.createAppender()) {
            a.appendsToLose = 1;
            assertEquals(1000, appender.write(bytes("one")));
            assertEquals(2, nodes.arrivals.size(), "lost once, then resent: " + nodes.arrivals);
            FakeNodes.Arrival lost = nodes.arrivals.get(0);
            FakeNodes.Arrival resent = nodes.arrivals.get(1);
            assertTrue(lost.lost());
            assertEquals(lost.epoch(), resent.epoch(), "same writer epoch");
            assertEquals(lost.writerSequence(), resent.writerSequence(), "same writer sequence");
            assertTrue(resent.frameSequence() > lost.frameSequence(), "a new frame sequence (the node drops a replayed frame)");
            assertTrue(resent.atNanos() - lost.atNanos() >= AppendMachine.RESEND_NANOS, "resent after 250 ms, not before: "
                    + (resent.atNanos() - lost.atNanos()) / 1_000_000 + " ms");
            assertTrue(resent.atNanos() - lost.atNanos() < AppendMachine.SILENCE_NANOS, "on the same connection, before giving the node up");
            assertEquals(1, queue.appendMachine().resends());
            assertEquals(0, queue.appendMachine().failovers());
            assertEquals(1, nodes.appended);
        }
    }

    @Test
    void aLostAnswerIsResentAndTheNodeAnswersTheOriginalIndex() {
        try (RemoteQueue queue = connect(); QueueAppender appender = queue.createAppender()) {
            a.answersToLose = 1;
            assertEquals(1000, appender.write(bytes("one")), "the index of the first arrival");
            assertEquals(2, nodes.arrivals.size());
            assertEquals(nodes.arrivals.get(0).writerSequence(), nodes.arrivals.get(1).writerSequence());
            assertEquals(1, nodes.appended, "appended once");
            assertEquals(1001, appender.write(bytes("two")), "the next write is the next excerpt");
        }
    }

    @Test
    void aRefusalNamingTheLeaderRedirectsTheWriteThere() {
        try (RemoteQueue queue = connect(); QueueAppender appender = queue.createAppender()) {
            assertEquals(1000, appender.write(bytes("one")));
            // B leads term 2; A refuses and names B. A's CONNECTED still says it leads (it has not learned yet): only
            // the refusal's leader address gets the write to B
            a.refuseAppends = ClientRefusal.NOT_LEADER;
            a.leaderHost = "127.0.0.1";
            a.leaderPort = 41002;
            b.leads = true;
            b.term = 2;
            b.leaderPort = 0;
            assertEquals(1001, appender.write(bytes("two")));
            assertEquals(41002, queue.connectedNode().getPort(), "follows the redirect");
            assertEquals(1, queue.appendMachine().redirects());
            List<FakeNodes.Arrival> arrivals = nodes.arrivals;
            assertEquals(3, arrivals.size(), arrivals.toString());
            assertEquals(B, arrivals.get(2).node());
            assertEquals(arrivals.get(1).writerSequence(), arrivals.get(2).writerSequence(), "the refused write, not a new one");
            assertEquals(2, nodes.appended);
        }
    }

    @Test
    void aSilentLeaderIsGivenUpAndTheWriteIsResentToTheNewLeaderWhichAnswersTheOriginalIndex() {
        try (RemoteQueue queue = connect(); QueueAppender appender = queue.createAppender()) {
            assertEquals(1000, appender.write(bytes("one")));
            // A appends the next write (it replicates: B holds it) but nothing it says arrives any more; B leads term 2
            a.answersLost = true;
            b.leads = true;
            b.term = 2;
            b.leaderPort = 0;
            long before = nodes.now();
            assertEquals(1001, appender.write(bytes("two")), "the index A gave it: appended once, across the failover");
            assertEquals(2, nodes.appended);
            assertEquals(41002, queue.connectedNode().getPort());
            AppendMachine m = queue.appendMachine();
            assertEquals(1, m.failovers());
            FakeNodes.Arrival first = nodes.arrivals.get(1);
            FakeNodes.Arrival atB = nodes.arrivals.get(nodes.arrivals.size() - 1);
            assertEquals(A, first.node());
            assertEquals(B, atB.node());
            assertEquals(first.epoch(), atB.epoch(), "same writer epoch");
            assertEquals(first.writerSequence(), atB.writerSequence(), "same writer sequence");
            assertNotEquals(0, m.resends(), "resent to A while it was merely quiet");
            assertTrue(atB.atNanos() - before > AppendMachine.SILENCE_NANOS, "gave A up only after 1 s of silence");
        }
    }

    @Test
    void aBackPressuredPublicationFailsTheWriteWithBackPressureAfterItsTimeout() {
        try (RemoteQueue queue = connect(); QueueAppender appender = queue.createAppender()) {
            a.backPressured = true;
            long before = nodes.now();
            RemoteQueueException e = assertThrows(RemoteQueueException.class, () -> appender.write(bytes("one")));
            long waited = nodes.now() - before;
            assertEquals(RemoteQueueException.Reason.BACK_PRESSURE, e.reason(), e.getMessage());
            assertFalse(e.mayBeAppended(), "never offered");
            assertTrue(waited >= 1_000_000_000L && waited < 1_100_000_000L, "the back-pressure timeout (1 s): " + waited / 1_000_000 + " ms");
            assertEquals(AppendMachine.State.IDLE, queue.appendMachine().state());
            assertEquals(0, nodes.arrivals.size());
        }
    }

    @Test
    void aWriteNobodyAcknowledgesFailsWithAckTimeoutAfterItsTimeout() {
        try (RemoteQueue queue = connect(); QueueAppender appender = queue.createAppender()) {
            a.answersLost = true; // A takes the write and goes silent; B knows no other leader than A
            long before = nodes.now();
            RemoteQueueException e = assertThrows(RemoteQueueException.class, () -> appender.write(bytes("one")));
            long waited = nodes.now() - before;
            assertEquals(RemoteQueueException.Reason.ACK_TIMEOUT, e.reason(), e.getMessage());
            assertTrue(e.mayBeAppended(), "sent: it may be in the queue");
            assertTrue(waited >= 5_000_000_000L && waited < 5_100_000_000L, "the ack timeout (5 s): " + waited / 1_000_000 + " ms");
            assertTrue(e.getMessage().contains("no acknowledgement within 5000 ms"), e.getMessage());
            assertEquals(AppendMachine.State.IDLE, queue.appendMachine().state());
            // the next write goes through once a leader answers again
            a.answersLost = false;
            assertEquals(1001, appender.write(bytes("two")));
        }
    }
}
