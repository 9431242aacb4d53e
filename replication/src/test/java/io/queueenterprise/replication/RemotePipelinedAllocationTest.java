package io.queueenterprise.replication;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.remote.AppendListener;
import io.queueenterprise.remote.RemoteAppender;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pipelined remote append path allocates nothing of ours per append in steady state, with real parts: a
 * {@link RemoteAppender} writing with a window in flight ({@code writeAsync}, the listener told each index) over Aeron
 * UDP to a quorum-mode leader whose gateway appends, queues and coalesces the acks and releases them as the quorum
 * index passes (a follower replicating). Measured with JFR's allocation samples on the writer thread and the nodes'
 * duty-cycle threads, leaving out what Aeron's media drivers and conductors allocate inside
 * {@code AgentInvoker.invoke} (as {@link SteadyStateAllocationTest}).
 */
@org.junit.jupiter.api.Tag("integration")
class RemotePipelinedAllocationTest {
    private static final String QUEUE = "payments"; // RemoteClientTest.initialise creates it
    private static final int APPENDS = 100_000;

    @TempDir
    Path tmp;

    @Test
    void pipelinedRemoteAppendsAllocateNothingOfOursPerAppend() throws Exception {
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
            Path file = tmp.resolve("allocations.jfr");
            AtomicReference<Throwable> writerFailure = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                try (RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                        .clientCredential(cluster.clientCredential).keyRing(ring).ackTimeout(Duration.ofSeconds(30))
                        .backPressureTimeout(Duration.ofSeconds(30)).build();
                     RemoteAppender appender = remote.createAppender(listener)) {
                    byte[] payload = new byte[64];
                    write(appender, payload); // warm-up: buffers grown, code compiled
                    try (Recording recording = new Recording()) {
                        recording.enable("jdk.ObjectAllocationSample").with("throttle", "10000/s").withStackTrace();
                        recording.start();
                        write(appender, payload);
                        recording.stop();
                        recording.dump(file);
                    }
                } catch (Throwable e) {
                    writerFailure.set(e);
                }
            }, "qe-test-remote-writer");
            writer.start();
            writer.join(300_000);
            assertNull(writerFailure.get(), () -> "the writer failed: " + writerFailure.get());
            assertNull(failure.get(), () -> "an append failed: " + failure.get());
            assertEquals(2L * APPENDS, acknowledged[0]);
            long ackFrames = leader.clientGateway().ackFrames();
            long appended = leader.clientGateway().appended();
            System.out.printf("the gateway sent %,d APPEND_ACK frames for %,d appends%n", ackFrames, appended);
            assertTrue(ackFrames * 4 < appended, "acks coalesced: " + ackFrames + " frames for " + appended + " appends");
            Map<String, Long> ours = new TreeMap<>();
            long aeron = 0;
            long growth = 0;
            for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
                String thread = e.getThread("eventThread") == null ? null : e.getThread("eventThread").getJavaName();
                if (thread == null || !(thread.startsWith("qe-replication-") || thread.equals("qe-test-remote-writer"))) {
                    continue;
                }
                List<RecordedFrame> frames = e.getStackTrace() == null ? List.of() : e.getStackTrace().getFrames();
                if (frames.stream().anyMatch(f -> f.getMethod().getType().getName().equals("org.agrona.concurrent.AgentInvoker"))) {
                    aeron += e.getLong("weight");
                    continue;
                }
                if (frames.stream().anyMatch(f -> f.getMethod().getName().equals("resize")
                        && (f.getMethod().getType().getName().startsWith("org.HdrHistogram.")
                        || f.getMethod().getType().getName().equals("io.aeron.BufferBuilder")))) {
                    // a latency histogram widening its range, a fragment assembler growing to a larger batch: once, not per append
                    growth += e.getLong("weight");
                    continue;
                }
                if (frames.stream().anyMatch(f -> f.getMethod().getName().equals("resendChangedDescriptor")
                        || f.getMethod().getType().getName().endsWith(".DescriptorWatch"))) {
                    continue; // 10 times a second on the leader: per time, not per append (SteadyStateAllocationTest)
                }
                StringBuilder where = new StringBuilder(thread).append(' ').append(e.getClass("objectClass").getName());
                for (int i = 0; i < Math.min(6, frames.size()); i++) {
                    where.append(" <- ").append(frames.get(i).getMethod().getType().getName()).append('.').append(frames.get(i).getMethod().getName());
                }
                ours.merge(where.toString(), e.getLong("weight"), Long::sum);
            }
            long oursTotal = ours.values().stream().mapToLong(Long::longValue).sum();
            System.out.printf("pipelined remote appends: %,d appends, ours about %,d bytes, Aeron's drivers/conductors about %,d bytes,"
                    + " histogram growth about %,d bytes%n", APPENDS, oursTotal, aeron, growth);
            ours.entrySet().stream().sorted((a, b) -> Long.compare(b.getValue(), a.getValue())).limit(10)
                    .forEach(en -> System.out.println("  " + en.getValue() + " " + en.getKey()));
            assertTrue(oursTotal < APPENDS / 4, "the pipelined remote path allocated about " + oursTotal + " bytes for "
                    + APPENDS + " appends: " + ours);
        }
    }

    private static void write(RemoteAppender appender, byte[] payload) {
        for (int i = 0; i < APPENDS; i++) {
            appender.writeAsync(payload, 0, payload.length, i);
        }
        appender.flush();
    }
}
