package io.queueenterprise.remote;

import io.queueenterprise.crypto.AllocationCounter;
import io.queueenterprise.queue.QueueAppender;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A remote write on a warm connection allocates nothing in the client: seal into the APPEND buffer, the step machine,
 * the frame's MAC, the answer's decode and check (the fake node allocates nothing either, with recording off). Uses
 * the per-thread allocation counter (deterministic, not timing).
 */
@Tag("unit")
class AppendSteadyStateAllocationTest extends FakeNodesFixture {
    private static final int WARMUP = 20_000;
    private static final int MEASURED = 20_000;
    @Test
    void anAcknowledgedWriteAllocatesNothingOnceWarm() {
        AllocationCounter counter = AllocationCounter.enabled();
        nodes.recording = false;
        byte[] message = new byte[100];
        try (RemoteQueue queue = connect(); QueueAppender appender = queue.createAppender()) {
            for (int i = 0; i < WARMUP; i++) {
                appender.write(message);
            }
            counter.assertSeesAllocation();
            long least = AllocationCounter.least(counter.threeRounds(() -> {
                for (int i = 0; i < MEASURED; i++) {
                    appender.write(message);
                }
                return MEASURED;
            }));
            assertEquals(WARMUP + 3 * MEASURED, nodes.appended);
            assertEquals(0, queue.appendMachine().resends(), "every write acknowledged at once");
            assertTrue(least < 1024, MEASURED + " acknowledged writes allocated " + least + " bytes");
        }
    }

    /** The pipelined path: writeAsync with a window in flight, coalesced acks, the listener told; nothing allocated. */
    @Test
    void pipelinedWritesAllocateNothingOnceWarm() {
        AllocationCounter counter = AllocationCounter.enabled();
        nodes.recording = false;
        byte[] message = new byte[100];
        long[] acknowledged = new long[1];
        AppendListener listener = new AppendListener() {
            @Override
            public void onAcknowledged(long correlation, long index) {
                acknowledged[0]++;
            }

            @Override
            public void onFailed(long correlation, RemoteQueueException failure) {
                throw failure;
            }
        };
        try (RemoteQueue queue = connect(); RemoteAppender appender = queue.createAppender(listener)) {
            for (int i = 0; i < WARMUP; i++) {
                appender.writeAsync(message, 0, message.length, i);
            }
            appender.flush();
            counter.assertSeesAllocation();
            long least = AllocationCounter.least(counter.threeRounds(() -> {
                for (int i = 0; i < MEASURED; i++) {
                    appender.writeAsync(message, 0, message.length, i);
                    if ((i & 7) == 0) {
                        appender.poll();
                    }
                }
                appender.flush();
                return MEASURED;
            }));
            assertEquals(WARMUP + 3 * MEASURED, nodes.appended);
            assertEquals(WARMUP + 3 * MEASURED, acknowledged[0]);
            assertEquals(0, queue.appendMachine().resends(), "every write acknowledged without a resend");
            assertTrue(least < 1024, MEASURED + " pipelined writes allocated " + least + " bytes");
        }
    }
}
