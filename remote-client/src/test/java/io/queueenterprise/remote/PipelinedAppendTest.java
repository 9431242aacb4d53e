package io.queueenterprise.remote;

import io.queueenterprise.protocol.client.ClientRefusal;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The window ({@link AppendWindow}, {@link AppendMachine}, {@link RemoteAppender#writeAsync}) against {@link FakeNodes}
 * on the test's clock: many appends in flight, acknowledged by coalesced frames, settled in order; a lost APPEND in the
 * middle of the window (the node refuses the rest SEQUENCE_GAP naming it: the client resends from there, never
 * reordered); a redirect of a whole window; a failover after the old leader appended part of the window (the new one
 * answers what it holds with the original indexes and appends the rest); the ack timeout and a full window.
 */
@Tag("unit")
class PipelinedAppendTest extends FakeNodesFixture {

    /** What the listener was told, in order. */
    static final class Outcomes implements AppendListener {
        final List<Long> correlations = new ArrayList<>();
        final List<Long> indexes = new ArrayList<>();
        final List<RemoteQueueException> failures = new ArrayList<>();

        @Override
        public void onAcknowledged(long correlation, long index) {
            correlations.add(correlation);
            indexes.add(index);
        }

        @Override
        public void onFailed(long correlation, RemoteQueueException failure) {
            correlations.add(correlation);
            indexes.add(-1L);
            failures.add(failure);
        }
    }

    /** The sequences the fake node appended (took as new), in the order it appended them. */
    private List<Integer> appendedOrder(List<FakeNodes.Arrival> arrivals) {
        List<Integer> order = new ArrayList<>();
        int next = 0;
        for (FakeNodes.Arrival a : arrivals) {
            if (!a.lost() && a.writerSequence() == next) {
                order.add(a.writerSequence());
                next++;
            }
        }
        return order;
    }

    private static List<Long> range(long from, int n) {
        List<Long> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(from + i);
        }
        return out;
    }

    @Test
    void aFullWindowIsAcknowledgedInOrderByCoalescedAcks() {
        Outcomes outcomes = new Outcomes();
        try (RemoteQueue queue = connect(); RemoteAppender appender = queue.createAppender(outcomes)) {
            nodes.holdAcks = true; // as for a quorum (200 writes: under the 250 ms the client waits before resending)
            for (int i = 0; i < 200; i++) {
                appender.writeAsync(bytes("m" + i), 0, 2, i);
            }
            assertEquals(200, appender.inFlight(), "the whole window in flight");
            // the default's batching (from 64 in flight on) leaves at most the last 63 for the next step
            assertTrue(nodes.arrivals.size() > 200 - RemoteAppender.SEND_BATCH, nodes.arrivals.size() + " sent");
            appender.poll();
            assertEquals(200, nodes.arrivals.size(), "all sent before any ack");
            assertTrue(outcomes.correlations.isEmpty());
            nodes.holdAcks = false;
            appender.flush();
            assertEquals(range(0, 200), outcomes.correlations, "settled in write order");
            assertEquals(range(1000, 200), outcomes.indexes, "each at its index");
            assertEquals(200, nodes.appended);
            assertEquals(200, nodes.arrivals.size(), "nothing resent");
            assertTrue(nodes.ackFrames <= 2, "acks coalesced: " + nodes.ackFrames + " frames for 200 appends");
            assertEquals(nodes.ackFrames, queue.appendMachine().ackFrames());
            assertEquals(1200, appender.write(bytes("blocking")), "the blocking write after them");
        }
    }

    @Test
    void appendsThatWaitTogetherGoAsOneBatchFrameAndAreTakenEachAsItsOwnAppend() {
        Outcomes outcomes = new Outcomes();
        try (RemoteQueue queue = RemoteQueue.builder(A, B).queue(QUEUE).clientCredential(credentialFile).keyRing(ring)
                .window(500, RemoteQueue.DEFAULT_WINDOW_BYTES).sendBatching(java.time.Duration.ofSeconds(1))
                .transport(nodes).clock(nodes.clock).idleStrategy(org.agrona.concurrent.NoOpIdleStrategy.INSTANCE).build();
             RemoteAppender appender = queue.createAppender(outcomes)) {
            byte[] large = new byte[RemoteQueue.MAX_BATCH_BYTES / 2];
            nodes.holdAcks = true; // the first append stays in flight, so the later ones wait for each other (the linger)
            for (int i = 0; i < 300; i++) { // every 50th too large to share a batch with another
                byte[] m = i % 50 == 49 ? large : bytes("m" + i);
                appender.writeAsync(m, 0, m.length, i);
            }
            nodes.holdAcks = false;
            appender.flush();
            assertEquals(range(0, 300), outcomes.correlations);
            assertEquals(range(1000, 300), outcomes.indexes, "each appended once, in order, at its index");
            assertEquals(300, nodes.appended);
            assertEquals(range(0, 300).stream().map(Long::intValue).toList(), appendedOrder(nodes.arrivals));
            assertEquals(300, nodes.arrivals.size(), "nothing resent");
            long batches = queue.appendMachine().batchFrames();
            assertEquals(nodes.batches, batches);
            assertTrue(batches >= 300 / ClientProtocolLimits.MAX_BATCH && batches < 30, batches + " batch frames for 300 appends");
            assertEquals(300, queue.appendMachine().sends());
        }
    }

    /** The batch limits as the client sees them. */
    private static final class ClientProtocolLimits {
        static final int MAX_BATCH = io.queueenterprise.protocol.client.ClientProtocol.MAX_BATCH_APPENDS;
    }

    @Test
    void aLostAppendInTheWindowIsRefusedAsAGapAndTheWindowIsResentFromThereInOrder() {
        Outcomes outcomes = new Outcomes();
        try (RemoteQueue queue = connect(); RemoteAppender appender = queue.createAppender(outcomes)) {
            a.loseSequenceOnce = 3;
            for (int i = 0; i < 20; i++) {
                appender.writeAsync(bytes("m"), 0, 1, i);
            }
            appender.flush();
            assertEquals(range(0, 20), outcomes.correlations);
            assertEquals(range(1000, 20), outcomes.indexes, "appended once each, in order");
            assertEquals(20, nodes.appended);
            assertEquals(range(0, 20).stream().map(Long::intValue).toList(), appendedOrder(nodes.arrivals));
            List<Integer> sent = nodes.arrivals.stream().map(FakeNodes.Arrival::writerSequence).toList();
            int lost = sent.indexOf(3);
            int resent = sent.lastIndexOf(3);
            assertTrue(nodes.arrivals.get(lost).lost() && resent > lost, "sequence 3 lost, then resent: " + sent);
            assertTrue(nodes.arrivals.get(resent).atNanos() - nodes.arrivals.get(lost).atNanos() < AppendMachine.RESEND_NANOS,
                    "resent on the gap refusal, not after the quiet interval");
            for (int i = resent + 1; i < sent.size(); i++) {
                assertEquals(sent.get(i - 1) + 1, (int) sent.get(i), "from the gap on, in order, each once: " + sent);
            }
            assertEquals(19, (int) sent.get(sent.size() - 1));
            assertTrue(queue.appendMachine().resends() >= 1);
            assertEquals(0, queue.appendMachine().failovers());
        }
    }

    @Test
    void aRedirectMovesTheWholeWindowToTheLeaderItNames() {
        Outcomes outcomes = new Outcomes();
        try (RemoteQueue queue = connect(); RemoteAppender appender = queue.createAppender(outcomes)) {
            a.refuseAppends = ClientRefusal.NOT_LEADER;
            a.leaderHost = "127.0.0.1";
            a.leaderPort = 41002;
            b.leads = true;
            b.term = 2;
            b.leaderPort = 0;
            for (int i = 0; i < 50; i++) {
                appender.writeAsync(bytes("m"), 0, 1, i);
            }
            appender.flush();
            assertEquals(range(1000, 50), outcomes.indexes);
            assertEquals(41002, queue.connectedNode().getPort());
            assertEquals(1, queue.appendMachine().redirects(), "one redirect for the window");
            assertEquals(range(0, 50).stream().map(Long::intValue).toList(), appendedOrder(nodes.arrivals.stream()
                    .filter(x -> x.node().equals(B)).toList()));
        }
    }

    @Test
    void afterAFailoverTheWindowIsResentAndTheNewLeaderAnswersWhatItHoldsWithTheOriginalIndexes() {
        Outcomes outcomes = new Outcomes();
        try (RemoteQueue queue = connect(); RemoteAppender appender = queue.createAppender(outcomes)) {
            appender.writeAsync(bytes("m"), 0, 1, 0);
            appender.flush();
            // A appends sequences 1..10 (replicated: B holds them), never gets 11.., and nothing it says arrives
            a.answersLost = true;
            a.loseFromSequence = 11;
            b.leads = true;
            b.term = 2;
            b.leaderPort = 0;
            for (int i = 1; i < 30; i++) {
                appender.writeAsync(bytes("m"), 0, 1, i);
            }
            appender.flush();
            assertEquals(range(0, 30), outcomes.correlations);
            assertEquals(range(1000, 30), outcomes.indexes, "1..10 at the indexes A gave them, 11.. appended by B after them");
            assertEquals(30, nodes.appended, "each appended once across the failover");
            assertEquals(1, queue.appendMachine().failovers());
            List<Integer> atB = nodes.arrivals.stream().filter(x -> x.node().equals(B)).map(FakeNodes.Arrival::writerSequence).toList();
            assertEquals(range(1, 29).stream().map(Long::intValue).toList(), atB, "the whole window again, in order, once");
            FakeNodes.Arrival firstAtB = nodes.arrivals.stream().filter(x -> x.node().equals(B)).findFirst().orElseThrow();
            assertTrue(firstAtB.atNanos() - b.connectedAtNanos < AppendMachine.RESEND_NANOS,
                    "resent as soon as connected, not after a quiet interval");
        }
    }

    @Test
    void aWindowNobodyAcknowledgesFailsWholeWithAckTimeoutAndTheNextWriteGoesUnderANewEpoch() {
        Outcomes outcomes = new Outcomes();
        try (RemoteQueue queue = connect(); RemoteAppender appender = queue.createAppender(outcomes)) {
            a.answersLost = true;
            for (int i = 0; i < 10; i++) {
                appender.writeAsync(bytes("m"), 0, 1, i);
            }
            appender.flush();
            assertEquals(range(0, 10), outcomes.correlations);
            assertEquals(10, outcomes.failures.size());
            for (RemoteQueueException e : outcomes.failures) {
                assertEquals(RemoteQueueException.Reason.ACK_TIMEOUT, e.reason(), e.getMessage());
                assertTrue(e.mayBeAppended(), "sent: may be in the queue");
            }
            a.answersLost = false;
            long epochBefore = nodes.arrivals.get(0).epoch();
            assertEquals(1010, appender.write(bytes("next")));
            FakeNodes.Arrival last = nodes.arrivals.get(nodes.arrivals.size() - 1);
            assertFalse(last.epoch() == epochBefore, "a new writer epoch after the failed window");
            assertEquals(0, last.writerSequence());
        }
    }

    @Test
    void aFullWindowRefusesTheNextWriteWithWindowFullAfterTheBackPressureTimeout() {
        Outcomes outcomes = new Outcomes();
        try (RemoteQueue queue = connect(4, 64 * 1024); RemoteAppender appender = queue.createAppender(outcomes)) {
            a.answersLost = true;
            for (int i = 0; i < 4; i++) {
                appender.writeAsync(bytes("m"), 0, 1, i);
            }
            long before = nodes.now();
            RemoteQueueException e = org.junit.jupiter.api.Assertions.assertThrows(RemoteQueueException.class,
                    () -> appender.writeAsync(bytes("m"), 0, 1, 4));
            long waited = nodes.now() - before;
            assertEquals(RemoteQueueException.Reason.WINDOW_FULL, e.reason(), e.getMessage());
            assertFalse(e.mayBeAppended());
            assertTrue(waited >= 1_000_000_000L && waited < 1_100_000_000L, "the back-pressure timeout: " + waited / 1_000_000 + " ms");
            assertEquals(4, appender.inFlight());
            a.answersLost = false;
            appender.flush();
            assertEquals(range(1000, 4), outcomes.indexes, "the window was resent and acknowledged");
        }
    }

    @Test
    void byDefaultEachWriteIsSentAtOnceUntil16AreUnacknowledgedThenWritesWaitUntilNoneIs() {
        Outcomes outcomes = new Outcomes();
        try (RemoteQueue queue = connect(); RemoteAppender appender = queue.createAppender(outcomes)) {
            nodes.holdAcks = true; // the appends stay in flight, as a writer's do when it streams ahead of its acks
            nodes.tickNanos = 100; // a step takes 0.1 µs, well inside the default's linger
            int threshold = RemoteQueue.ADAPTIVE_IN_FLIGHT;
            for (int i = 0; i < threshold; i++) {
                appender.writeAsync(bytes("m" + i), 0, 2, i);
                assertEquals(i + 1, nodes.arrivals.size(), "fewer than " + threshold + " in flight: sent at once");
            }
            for (int i = threshold; i < threshold + 10; i++) {
                appender.writeAsync(bytes("m" + i), 0, 2, i);
            }
            assertEquals(threshold, nodes.arrivals.size(), threshold + " unacknowledged: the next ones wait for each other");
            appender.poll();
            assertEquals(threshold + 10, nodes.arrivals.size(), "one step sends what waited");
            assertEquals(1, queue.appendMachine().batchFrames(), "in one APPEND_BATCH");
            nodes.holdAcks = false;
            nodes.acksLeft = threshold + 5; // the node acknowledges part of the window in one frame
            appender.poll();
            assertEquals(5, appender.inFlight(), "5 left in flight, under the threshold");
            nodes.holdAcks = true;
            appender.writeAsync(bytes("next"), 0, 4, threshold + 10);
            assertEquals(threshold + 10, nodes.arrivals.size(), "still streaming (appends in flight): it waits");
            appender.poll();
            assertEquals(threshold + 11, nodes.arrivals.size());
            nodes.acksLeft = Long.MAX_VALUE;
            nodes.nanos += RemoteQueue.ADAPTIVE_LINGER_NANOS; // the linger, since the last step
            appender.writeAsync(bytes("late"), 0, 4, threshold + 11);
            assertEquals(threshold + 12, nodes.arrivals.size(), "a write past the linger is sent at once");
            nodes.holdAcks = false;
            appender.flush();
            assertEquals(range(0, threshold + 12), outcomes.correlations, "settled in write order");
            assertEquals(range(1000, threshold + 12), outcomes.indexes, "each at its index, once");
            assertEquals(threshold + 12, nodes.arrivals.size(), "nothing resent");
            // nothing in flight: no longer streaming, so a write goes at once
            appender.writeAsync(bytes("after"), 0, 5, threshold + 12);
            assertEquals(threshold + 13, nodes.arrivals.size(), "with the window drained a write is sent at once");
        }
    }

    @Test
    void sendBatchingZeroSendsEveryWriteAtOnceHoweverManyAreInFlight() {
        Outcomes outcomes = new Outcomes();
        try (RemoteQueue queue = RemoteQueue.builder(A, B).queue(QUEUE).clientCredential(credentialFile).keyRing(ring)
                .transport(nodes).clock(nodes.clock).idleStrategy(org.agrona.concurrent.NoOpIdleStrategy.INSTANCE)
                .sendBatching(java.time.Duration.ZERO).build();
             RemoteAppender appender = queue.createAppender(outcomes)) {
            nodes.holdAcks = true;
            for (int i = 0; i < 3 * RemoteQueue.ADAPTIVE_IN_FLIGHT; i++) {
                appender.writeAsync(bytes("m" + i), 0, 2, i);
                assertEquals(i + 1, nodes.arrivals.size(), "sent before writeAsync returned");
            }
            assertEquals(0, queue.appendMachine().batchFrames(), "no batch: nothing ever waited");
            nodes.holdAcks = false;
            appender.flush();
            assertEquals(range(0, 3 * RemoteQueue.ADAPTIVE_IN_FLIGHT), outcomes.correlations);
        }
    }

    @Test
    void withSendBatchingAWriteWhileOthersAreInFlightWaitsForTheNextStepAndGoesWithThem() {
        Outcomes outcomes = new Outcomes();
        try (RemoteQueue queue = RemoteQueue.builder(A, B).queue(QUEUE).clientCredential(credentialFile).keyRing(ring)
                .transport(nodes).clock(nodes.clock).idleStrategy(org.agrona.concurrent.NoOpIdleStrategy.INSTANCE)
                .sendBatching(java.time.Duration.ofMillis(50)).build();
             RemoteAppender appender = queue.createAppender(outcomes)) {
            nodes.holdAcks = true;
            appender.writeAsync(bytes("m0"), 0, 2, 0);
            assertEquals(1, nodes.arrivals.size(), "the first of a burst is sent at once");
            for (int i = 1; i < 10; i++) {
                appender.writeAsync(bytes("m" + i), 0, 2, i);
            }
            assertEquals(1, nodes.arrivals.size(), "the next ones wait: the appender was driven less than the linger ago");
            appender.poll();
            assertEquals(10, nodes.arrivals.size(), "one step sends what waited");
            nodes.nanos += 60_000_000L; // past the linger
            appender.writeAsync(bytes("m10"), 0, 3, 10);
            assertEquals(11, nodes.arrivals.size(), "a write after the linger is sent at once");
            for (int i = 11; i < 11 + RemoteAppender.SEND_BATCH; i++) {
                appender.writeAsync(bytes("m"), 0, 1, i);
            }
            assertEquals(11 + RemoteAppender.SEND_BATCH, nodes.arrivals.size(), "a full batch is sent without waiting for a step");
            appender.writeAsync(bytes("last"), 0, 4, 11 + RemoteAppender.SEND_BATCH);
            nodes.holdAcks = false;
            appender.flush();
            assertEquals(range(0, 12 + RemoteAppender.SEND_BATCH), outcomes.correlations, "settled in write order");
            assertEquals(range(1000, 12 + RemoteAppender.SEND_BATCH), outcomes.indexes, "each at its index, once");
            assertEquals(12 + RemoteAppender.SEND_BATCH, nodes.arrivals.size(), "nothing resent");
        }
    }

    @Test
    void withoutSendBatchingEveryWriteIsSentBeforeItReturns() {
        Outcomes outcomes = new Outcomes();
        try (RemoteQueue queue = connect(); RemoteAppender appender = queue.createAppender(outcomes)) {
            nodes.holdAcks = true;
            for (int i = 0; i < 10; i++) {
                appender.writeAsync(bytes("m" + i), 0, 2, i);
                assertEquals(i + 1, nodes.arrivals.size(), "write " + i + " sent before writeAsync returned");
            }
            nodes.holdAcks = false;
            appender.flush();
            assertEquals(range(0, 10), outcomes.correlations);
        }
    }

    @Test
    void aSendBatchingLingerOutsideZeroToOneSecondIsRefusedByName() {
        for (java.time.Duration wrong : java.util.Arrays.asList(java.time.Duration.ofNanos(-1), java.time.Duration.ofSeconds(2), null)) {
            RemoteQueueException e = org.junit.jupiter.api.Assertions.assertThrows(RemoteQueueException.class,
                    () -> RemoteQueue.builder(A, B).queue(QUEUE).clientCredential(credentialFile).keyRing(ring).transport(nodes)
                            .sendBatching(wrong).build());
            assertEquals(RemoteQueueException.Reason.BAD_CONFIGURATION, e.reason());
            assertTrue(e.getMessage().contains("sendBatching: " + wrong + " is not in 0..1 s"), e.getMessage());
        }
    }
}
