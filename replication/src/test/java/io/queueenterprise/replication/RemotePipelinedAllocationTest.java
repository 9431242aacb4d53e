package io.queueenterprise.replication;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.remote.AppendListener;
import io.queueenterprise.remote.RemoteAppender;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import io.queueenterprise.queue.ReplicaStore;
import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The pipelined remote append path allocates nothing per append in steady state, with real parts: a
 * {@link RemoteAppender} writing with a window in flight ({@code writeAsync}, the listener told each index) over Aeron
 * UDP to a quorum-mode leader whose gateway appends, queues and coalesces the acks and releases them as the quorum
 * index passes (a follower replicating). Exact: each thread's allocation counter
 * ({@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}) across {@value #APPENDS} appends after as many
 * warm-up ones, on the client's writing thread (the appender, its embedded media driver and conductor, invoked), the
 * leader's duty thread (replication, the client gateway, its media driver), the follower's and the follower's queue
 * writer: nothing per append, at most {@link DutyThreadAllocations#HOUSEKEEPING_BYTES_PER_SECOND} per second of
 * window each (timers). Run where Aeron's pollers use their selector ({@code allocation} execution).
 * {@code -Dqe.allocation.diagnose=true} runs the JFR diagnostic even within the bound. JFR's allocation samples of the same window are printed only when a thread allocated, to
 * say where ({@link DutyThreadAllocations}).
 */
@org.junit.jupiter.api.Tag("integration")
class RemotePipelinedAllocationTest {
    private static final String QUEUE = "payments"; // RemoteClientTest.initialise creates it
    private static final int APPENDS = 200_000;

    @TempDir
    Path tmp;

    /** Without send batching (the default: each append sent as written) and with it (appends sent in batches). */
    @org.junit.jupiter.params.ParameterizedTest(name = "sendBatching {0} ns")
    @org.junit.jupiter.params.provider.ValueSource(longs = {0, 20_000})
    void pipelinedRemoteAppendsAllocateNothingOfOursPerAppend(long sendBatchingNanos) throws Exception {
        assumeTrue(DutyThreadAllocations.aeronPollsWithoutIterators(), "run in this module's allocation execution"
                + " (org.agrona.transport.iteration.threshold=-1): Aeron's default poll loop allocates as the JIT decides");
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.sealedQueue(QUEUE, AckMode.QUORUM))).serveClients();
        KeyRing ring = RemoteClientTest.newRing();
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
            leader.promote(1);
            follower.follow("replica-0", 1);
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, true);
            long[] acknowledged = new long[1];
            AtomicReference<RemoteQueueException> failure = new AtomicReference<>();
            AppendListener listener = new AppendListener() {
                @Override
                public void onAcknowledged(long correlation, long index) {
                    acknowledged[0]++;
                }

                @Override
                public void onFailed(long correlation, RemoteQueueException e) {
                    failure.compareAndSet(null, e);
                }
            };
            AtomicReference<Throwable> writerFailure = new AtomicReference<>();
            long[] writerBytes = new long[1];
            double[] seconds = new double[1];
            AtomicReference<Map<String, Long>> allocated = new AtomicReference<>();
            AtomicReference<String> where = new AtomicReference<>("");
            try (ReplicaStore followerStore = ReplicaStore.open(cluster.queueDirectory(1, QUEUE), RollCycles.FAST_DAILY)) {
                Thread writer = new Thread(() -> {
                    try (RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                            .clientCredential(cluster.clientCredential).keyRing(ring).ackTimeout(Duration.ofSeconds(30))
                            .backPressureTimeout(Duration.ofSeconds(30)).sendBatching(Duration.ofNanos(sendBatchingNanos)).build();
                         RemoteAppender appender = remote.createAppender(listener)) {
                        byte[] payload = new byte[64];
                        write(appender, payload, followerStore); // warm-up: buffers grown, code compiled
                        DutyThreadAllocations duty = new DutyThreadAllocations(List.of("qe-replication-replica-0",
                                "qe-replication-replica-1", "qe-writer-replica-1-" + QUEUE));
                        DutyThreadAllocations.Window window = () -> writerBytes[0] = write(appender, payload, followerStore);
                        allocated.set(duty.measure(window));
                        seconds[0] = duty.elapsedSeconds();
                        long allowance = DutyThreadAllocations.housekeepingAllowance(seconds[0]) + DutyThreadAllocations.REMOTE_WINDOW_ONE_OFF_BYTES;
                        if (Boolean.getBoolean("qe.allocation.diagnose") || writerBytes[0] > allowance || !allocated.get().values().stream().allMatch(b -> b >= 0 && b <= allowance)) {
                            where.set(duty.whereAllocated(window, tmp.resolve("allocations.jfr")));
                        }
                    } catch (Throwable e) {
                        writerFailure.set(e);
                    }
                }, WRITER);
                writer.start();
                writer.join(300_000);
            }
            assertNull(writerFailure.get(), () -> "the writer failed: " + writerFailure.get());
            assertNull(failure.get(), () -> "an append failed: " + failure.get());
            assertEquals((where.get().isEmpty() ? 2L : 3L) * APPENDS, acknowledged[0]); // a failure's diagnostic writes once more
            long ackFrames = leader.clientGateway().ackFrames();
            long appended = leader.clientGateway().appended();
            long batches = leader.clientGateway().batchFrames();
            System.out.printf("the gateway sent %,d APPEND_ACK frames for %,d appends and took %,d APPEND_BATCH frames%n",
                    ackFrames, appended, batches);
            if (sendBatchingNanos > 0) {
                assertTrue(batches > 0, "appends that waited for each other went in APPEND_BATCH frames"); // its path measured too
            }
            System.out.printf("pipelined remote appends (sendBatching " + sendBatchingNanos + " ns): %,d measured in %.2f s; bytes allocated (exact) by the leader's (and its"
                    + " gateway's), the follower's and the follower writer's threads %s; the client's writing thread"
                    + " (RemoteAppender, its embedded media driver and conductor) %,d%n", APPENDS, seconds[0], allocated.get(), writerBytes[0]);
            assertTrue(ackFrames * 4 < appended, "acks coalesced: " + ackFrames + " frames for " + appended + " appends");
            // every byte counted, Aeron's drivers and conductors included (they run on these threads, invoked)
            long allowance = DutyThreadAllocations.housekeepingAllowance(seconds[0]) + DutyThreadAllocations.REMOTE_WINDOW_ONE_OFF_BYTES;
            for (Map.Entry<String, Long> thread : allocated.get().entrySet()) {
                assertTrue(thread.getValue() >= 0 && thread.getValue() <= allowance, () -> thread.getKey() + " allocated "
                        + thread.getValue() + " bytes over " + APPENDS + " remote appends in " + seconds[0]
                        + " s, more than housekeeping's " + allowance + "; " + where.get());
            }
            // the client's loop: sealing, signing, the window, its transport's driver and conductor (invoked)
            assertTrue(writerBytes[0] >= 0 && writerBytes[0] <= allowance, () -> WRITER + " allocated " + writerBytes[0]
                    + " bytes over " + APPENDS + " writeAsync appends in " + seconds[0] + " s; " + where.get());
        }
    }

    private static final String WRITER = "qe-test-remote-writer";

    /** Appends {@link #APPENDS} pipelined, waits until acknowledged and on the follower; what the loop allocated (exact). */
    private static long write(RemoteAppender appender, byte[] payload, ReplicaStore followerStore) throws InterruptedException {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < APPENDS; i++) {
            appender.writeAsync(payload, 0, payload.length, i);
        }
        appender.flush();
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        long last = appender.lastIndexAppended();
        // quorum acks: the follower holds every append; its writer may still be finishing the last
        if (!TestCluster.await(Duration.ofSeconds(60), () -> followerStore.lastIndex() >= last)) {
            throw new AssertionError("the follower did not reach index " + last);
        }
        return allocated;
    }
}
