package io.queueenterprise.queue;

import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pipelined appends on a node-hosted queue: writes return once written here, the acknowledged index is a watermark
 * read, awaited and watched from many threads, and the blocking appender keeps its meaning on top of it. The node is
 * played by a {@link ReplicaStore} on the same directory (what the replication node uses to publish its marks): the
 * test publishes the quorum index itself, so nothing here depends on timing.
 */
@org.junit.jupiter.api.Tag("unit")
class PipelinedAppendTest {
    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    /** The node's side: the queue hosted in {@code mode}, led at term 1, nothing acknowledged yet. */
    private ReplicaStore hostedBy(long mode) {
        ReplicaStore node = ReplicaStore.open(dir, RollCycles.FAST_DAILY);
        node.recordLeader(dir.getFileName().toString(), 1);
        node.recordAckMode(mode);
        node.publishWritableTerm(1);
        return node;
    }

    private EnterpriseQueue quorumQueue() {
        return EnterpriseQueue.builder(dir).encrypted(TestKeys.ring(1)).quorumAcks(ACK_TIMEOUT).build();
    }

    @Test
    void aPipelinedWriteReturnsOnceWrittenAndTheWatermarkSaysWhatAMajorityHolds() {
        try (ReplicaStore node = hostedBy(ReplicaStore.ACK_QUORUM);
             EnterpriseQueue queue = quorumQueue();
             QueueAppender appender = queue.createPipelinedAppender()) {
            QueueAcknowledgements acks = queue.acknowledgements();
            QueueAcknowledgements.Watch watch = acks.newWatch();
            long[] reported = {Long.MIN_VALUE, 0};
            QueueAcknowledgements.Handler handler = index -> {
                reported[0] = index;
                reported[1]++;
            };
            long[] indexes = new long[100];
            for (int i = 0; i < indexes.length; i++) {
                indexes[i] = appender.write(new byte[]{(byte) i}); // nothing acknowledged: it must not wait
            }
            assertEquals(indexes[99], queue.lastIndex());
            assertEquals(-1, acks.acknowledgedIndex());
            assertFalse(acks.isAcknowledged(indexes[0]));
            assertEquals(0, watch.poll(handler));

            node.publishQuorumIndex(indexes[49]);
            assertEquals(indexes[49], acks.acknowledgedIndex());
            assertTrue(acks.isAcknowledged(indexes[0]));
            assertTrue(acks.isAcknowledged(indexes[49]));
            assertFalse(acks.isAcknowledged(indexes[50]));
            assertEquals(indexes[49], acks.awaitAcknowledged(indexes[10], Duration.ofMillis(1)));
            assertEquals(1, watch.poll(handler));
            assertEquals(indexes[49], reported[0]);
            assertEquals(0, watch.poll(handler), "reported once per move, not per poll");
            assertEquals(1, reported[1]);
            assertEquals(indexes[49], watch.lastReported());

            AckTimeoutException timedOut = assertThrows(AckTimeoutException.class,
                    () -> acks.awaitAcknowledged(indexes[99], Duration.ofMillis(20)));
            assertEquals(indexes[99], timedOut.index());
            assertTrue(timedOut.getMessage().contains("0x" + Long.toHexString(indexes[49])), timedOut.getMessage());

            node.publishQuorumIndex(indexes[99]);
            assertEquals(indexes[99], acks.awaitAcknowledged(indexes[99], Duration.ofMillis(1)));
            assertEquals(1, watch.poll(handler));
            assertEquals(indexes[99], reported[0]);
        }
    }

    @Test
    void theBlockingAppenderStillReturnsOnlyOnceAMajorityHoldsItsWrite() throws Exception {
        ExecutorService writer = Executors.newSingleThreadExecutor();
        try (ReplicaStore node = hostedBy(ReplicaStore.ACK_QUORUM);
             EnterpriseQueue queue = quorumQueue()) {
            Future<Long> write = writer.submit(() -> {
                try (QueueAppender appender = queue.createAppender()) {
                    return appender.write(new byte[]{1, 2, 3});
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (queue.lastIndex() < 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            long index = queue.lastIndex();
            assertTrue(index >= 0, "the excerpt was written locally");
            assertFalse(write.isDone(), "returned before a majority held it");
            node.publishQuorumIndex(index);
            assertEquals(index, write.get(20, TimeUnit.SECONDS));
        } finally {
            writer.shutdownNow();
        }
    }

    @Test
    void theBlockingAppenderTimesOutAsDocumented() {
        try (ReplicaStore node = hostedBy(ReplicaStore.ACK_QUORUM);
             EnterpriseQueue queue = EnterpriseQueue.builder(dir).quorumAcks(Duration.ofMillis(20)).build();
             QueueAppender appender = queue.createAppender()) {
            AckTimeoutException timedOut = assertThrows(AckTimeoutException.class, () -> appender.write(new byte[]{1}));
            assertEquals(queue.lastIndex(), timedOut.index(), "written locally, at the index it carries");
            assertEquals(Duration.ofMillis(20), timedOut.timeout());
        }
    }

    @Test
    void manyThreadsWriteWithFullWindowsAndAwaitTheOneWatermark() throws Exception {
        int threads = 4;
        int writesEach = 5_000;
        int window = 32;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicBoolean stop = new AtomicBoolean();
        try (ReplicaStore node = hostedBy(ReplicaStore.ACK_QUORUM);
             EnterpriseQueue queue = quorumQueue()) {
            QueueAcknowledgements acks = queue.acknowledgements();
            // the node: acknowledges whatever is written, in steps, as followers' ACKs would move it
            Thread majority = new Thread(() -> {
                while (!stop.get()) {
                    long last = node.lastIndex();
                    if (last > node.quorumIndex()) {
                        node.publishQuorumIndex(last);
                    }
                    Thread.yield();
                }
            }, "majority");
            majority.start();
            List<Future<long[]>> writers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                writers.add(pool.submit(() -> {
                    long[] written = new long[writesEach];
                    try (QueueAppender appender = queue.createPipelinedAppender()) {
                        byte[] message = new byte[16];
                        for (int i = 0; i < writesEach; i++) {
                            if (i >= window) {
                                acks.awaitAcknowledged(written[i - window], ACK_TIMEOUT); // the window is full
                            }
                            written[i] = appender.write(message);
                        }
                        acks.awaitAcknowledged(written[writesEach - 1], ACK_TIMEOUT);
                    }
                    return written;
                }));
            }
            long highest = -1;
            for (Future<long[]> w : writers) {
                long[] written = w.get(60, TimeUnit.SECONDS);
                for (int i = 1; i < written.length; i++) {
                    assertTrue(written[i] > written[i - 1], "one writer's indexes grow");
                }
                highest = Math.max(highest, written[written.length - 1]);
            }
            stop.set(true);
            majority.join();
            assertTrue(acks.isAcknowledged(highest));
            try (QueueTailer tailer = queue.createTailer()) {
                int read = 0;
                byte[] into = new byte[64];
                while (tailer.read(into) >= 0) {
                    read++;
                }
                assertEquals(threads * writesEach, read, "every write once");
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
    }

    @Test
    void acknowledgementsAreRefusedWhereNoNodeAcknowledges() {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).build()) {
            QueueConfigurationException refused = assertThrows(QueueConfigurationException.class, queue::acknowledgements);
            assertEquals(QueueConfigurationException.Problem.ACK_MODE_MISMATCH, refused.problem());
        }
        try (ReplicaStore node = hostedBy(ReplicaStore.ACK_ASYNC);
             EnterpriseQueue queue = EnterpriseQueue.builder(dir).build()) {
            QueueConfigurationException refused = assertThrows(QueueConfigurationException.class, queue::acknowledgements);
            assertEquals(QueueConfigurationException.Problem.ACK_MODE_MISMATCH, refused.problem());
            assertTrue(refused.getMessage().contains("ASYNC"), refused.getMessage());
        }
    }

    @Test
    void replicatedReadsQueuesArePipelinedAlreadyAndWatchTheSameWatermark() {
        try (ReplicaStore node = hostedBy(ReplicaStore.ACK_REPLICATED_READS);
             EnterpriseQueue queue = EnterpriseQueue.builder(dir).build();
             QueueAppender appender = queue.createAppender();
             QueueAppender pipelined = queue.createPipelinedAppender()) {
            long first = appender.write(new byte[]{1});
            long second = pipelined.write(new byte[]{2});
            QueueAcknowledgements acks = queue.acknowledgements();
            assertFalse(acks.isAcknowledged(first));
            node.publishQuorumIndex(second);
            assertTrue(acks.isAcknowledged(second));
        }
    }

    /**
     * The pipelined path allocates nothing in steady state: write, read the watermark, poll a watch, await an
     * acknowledged index. Counts the bytes the thread allocates (HotSpot's per-thread counter: exact, not timing).
     */
    @Test
    void pipelinedWritesAndWatermarkReadsAllocateNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadAllocatedMemorySupported());
        long thread = Thread.currentThread().getId();
        try (ReplicaStore node = hostedBy(ReplicaStore.ACK_QUORUM);
             EnterpriseQueue queue = quorumQueue();
             QueueAppender appender = queue.createPipelinedAppender()) {
            QueueAcknowledgements acks = queue.acknowledgements();
            QueueAcknowledgements.Watch watch = acks.newWatch();
            Counter counter = new Counter();
            byte[] message = new byte[40];
            pipeline(appender, node, acks, watch, counter, message, 30_000);
            // Steady state is a window that allocates (almost) nothing; up to 5 windows are tried, since the JIT may
            // still deoptimize a method in one of them and the JVM then re-allocates the objects the compiled code had
            // kept in registers (JFR without TLABs showed Strings and byte[]s allocated at Chronicle call sites,
            // 3-31 KB per window, in about one window of four here). An allocation per write shows in every window.
            List<Long> windows = new ArrayList<>();
            for (int w = 0; w < 5 && (windows.isEmpty() || windows.get(windows.size() - 1) >= 16_384); w++) {
                long before = threads.getThreadAllocatedBytes(thread);
                pipeline(appender, node, acks, watch, counter, message, 300_000);
                windows.add(threads.getThreadAllocatedBytes(thread) - before);
            }
            // as SteadyStateAllocationTest: one 16-byte object per 1,000 writes would show as 4.8 KB per 300,000;
            // Chronicle maps new chunks of the cycle file now and then (a few KB per million writes)
            assertTrue(windows.get(windows.size() - 1) < 16_384, "bytes allocated per 300,000 pipelined writes, by window: " + windows);
            assertTrue(counter.calls > 0);
        }
    }

    private static final class Counter implements QueueAcknowledgements.Handler {
        long calls;
        long last;

        @Override
        public void onAcknowledged(long acknowledgedIndex) {
            calls++;
            last = acknowledgedIndex;
        }
    }

    /** Windows of 64 writes: the node acknowledges each window's last write, the writer polls and awaits it. */
    private static void pipeline(QueueAppender appender, ReplicaStore node, QueueAcknowledgements acks,
                                 QueueAcknowledgements.Watch watch, Counter counter, byte[] message, int count) {
        long sum = 0;
        for (int i = 0; i < count; i++) {
            message[0] = (byte) i;
            long index = appender.write(message);
            sum += acks.acknowledgedIndex();
            watch.poll(counter);
            if ((i & 63) == 63) {
                node.publishQuorumIndex(index);
                acks.awaitAcknowledged(index, ACK_TIMEOUT);
            }
        }
        if (sum == 42) {
            throw new AssertionError(); // consumes the reads
        }
    }
}
