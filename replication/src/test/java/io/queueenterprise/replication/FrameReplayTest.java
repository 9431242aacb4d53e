package io.queueenterprise.replication;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Subscription;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.replication.engine.DropCounters;
import io.queueenterprise.replication.engine.DropReason;
import io.queueenterprise.replication.engine.ReplicationAgent;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameType;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 19, section 3: every frame type of a real session, read off the wire, replayed to its receiver and reflected
 * to its sender, each type alone and then all of them in a loop for 30 s, while a writer appends in quorum mode on a
 * leader with one follower (a majority needs both). Quorum acknowledgements go on throughout (every append is acked
 * within {@link #ACK_TIMEOUT}), no session is started again (sequences and keys stay those of the live session), and
 * each node's counters say what was dropped, by reason and frame type.
 *
 * <p>The frames are read with an Aeron spy subscription on each node's own media driver ({@code aeron-spy:} on the
 * channel of its publication to the other node): what the spy reads is exactly what the node offered to the wire, and
 * no seam is needed in the node's channel layer, so the nodes under test run the production code unchanged.
 */
@Tag("integration")
@Tag("slow")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class FrameReplayTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(10);
    /**
     * About 200,000 injected frames in the full suite (192,332 and 216,572 on 2026-12-07, beside the other test JVM),
     * every captured one replayed and reflected thousands of times.
     */
    private static final Duration LOOP = Duration.ofSeconds(10);
    /** Copies of each frame sent when a type is replayed alone. */
    private static final int ALONE = 20;
    private static final int LARGE_EXCERPT = 200 * 1024;

    private static final List<FrameType> FROM_LEADER = List.of(FrameType.CHALLENGE_RESPONSE, FrameType.REFUSAL,
            FrameType.DESCRIPTOR, FrameType.DATA, FrameType.EXCERPT_PART, FrameType.HEARTBEAT);
    private static final List<FrameType> FROM_FOLLOWER = List.of(FrameType.CHALLENGE, FrameType.PROOF, FrameType.HELLO,
            FrameType.ACK, FrameType.HEARTBEAT);

    @TempDir
    Path tmp;

    @Test
    void replayedAndReflectedFramesOfEveryTypeChangeNothingAndQuorumAcksGoOn() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("orders", AckMode.QUORUM)));
        int leaderPort = cluster.peers.get(0).replicationPort();
        int followerPort = cluster.peers.get(1).replicationPort();
        ReplicationNode[] nodes = cluster.startNodes();
        ReplicationNode leader = nodes[0];
        ReplicationNode follower = nodes[1];
        Writer writer = null;
        try (WireTap fromLeader = new WireTap(ReplicationNode.aeronDirectoryOf("replica-0", cluster.dataDirectory(0)), followerPort);
             WireTap fromFollower = new WireTap(ReplicationNode.aeronDirectoryOf("replica-1", cluster.dataDirectory(1)), leaderPort)) {
            // A follower a term behind its leader is refused (a REFUSAL outside any session), then follows at its term.
            leader.promote(2);
            follower.follow("replica-0", 1);
            assertTrue(TestCluster.await(WAIT, () -> fromLeader.has(FrameType.REFUSAL)), "the leader refuses a stale CHALLENGE");
            follower.follow("replica-0", 2);

            writer = new Writer(cluster.queueDirectory(0, "orders"));
            Writer w = writer;
            assertTrue(TestCluster.await(WAIT, () -> w.acked.get() >= 100 || w.failure.get() != null),
                    () -> "quorum appends acked: " + w.acked.get() + ", " + w.failure.get() + "; " + leader.status());
            assertNull(writer.failure.get());
            assertTrue(TestCluster.await(WAIT, () -> FROM_LEADER.stream().allMatch(fromLeader::has)
                    && FROM_FOLLOWER.stream().allMatch(fromFollower::has)), () -> "every frame type captured: leader sent "
                    + fromLeader.types() + ", follower sent " + fromFollower.types());
            long sessionsLeader = leader.sessionsEstablished();
            long sessionsFollower = follower.sessionsEstablished();
            Map<FrameType, byte[]> leaderFrames = fromLeader.latest();
            Map<FrameType, byte[]> followerFrames = fromFollower.latest();

            try (FrameInjector toLeader = new FrameInjector(leaderPort);
                 FrameInjector toFollower = new FrameInjector(followerPort)) {
                // 1. each type alone, replayed to the node it was sent to
                for (FrameType type : FROM_LEADER) {
                    DropReason expected = switch (type) {
                        case CHALLENGE_RESPONSE, REFUSAL -> DropReason.UNEXPECTED; // no handshake in hand
                        default -> DropReason.REPLAYED; // sequence not above the last seen
                    };
                    replayAlone(toFollower, leaderFrames.get(type), follower, expected, type, writer);
                }
                for (FrameType type : FROM_FOLLOWER) {
                    DropReason expected = switch (type) {
                        case PROOF -> DropReason.UNEXPECTED; // no CHALLENGE answered, no PROOF awaited
                        default -> DropReason.REPLAYED; // a CHALLENGE answered before, or a sequence not above the last
                    };
                    replayAlone(toLeader, followerFrames.get(type), leader, expected, type, writer);
                }
                // 2. each type alone, reflected to the node that sent it
                for (FrameType type : FROM_LEADER) {
                    replayAlone(toLeader, leaderFrames.get(type), leader, DropReason.UNKNOWN_PEER, type, writer);
                }
                for (FrameType type : FROM_FOLLOWER) {
                    replayAlone(toFollower, followerFrames.get(type), follower, DropReason.UNKNOWN_PEER, type, writer);
                }
                assertEquals(sessionsLeader, leader.sessionsEstablished(), "no session started over");
                assertEquals(sessionsFollower, follower.sessionsEstablished(), "no session started over");

                // 3. everything captured, replayed and reflected, in a loop for 30 s
                List<byte[]> everyLeaderFrame = fromLeader.all();
                List<byte[]> everyFollowerFrame = fromFollower.all();
                Snapshot leaderBefore = new Snapshot(leader.drops());
                Snapshot followerBefore = new Snapshot(follower.drops());
                long ackedBefore = writer.acked.get();
                long sent = 0;
                long deadline = System.nanoTime() + LOOP.toNanos();
                for (int round = 0; System.nanoTime() < deadline; round++) {
                    byte[] l = everyLeaderFrame.get(round % everyLeaderFrame.size());
                    byte[] f = everyFollowerFrame.get(round % everyFollowerFrame.size());
                    toFollower.send(l);
                    toLeader.send(f);
                    toLeader.send(l);
                    toFollower.send(f);
                    sent += 4;
                    assertNull(writer.failure.get(), "an append was not acknowledged in time during the replay");
                }
                long ackedDuringLoop = writer.acked.get() - ackedBefore;
                writer.stopAndJoin();
                assertNull(writer.failure.get(), "every append acknowledged within " + ACK_TIMEOUT);
                assertTrue(ackedDuringLoop > 0, "quorum acks went on during the replay");
                assertEquals(sessionsLeader, leader.sessionsEstablished(), "no session started over in the loop");
                assertEquals(sessionsFollower, follower.sessionsEstablished(), "no session started over in the loop");
                assertEquals(NodeStatus.Role.LEADER, leader.status().role());
                assertEquals(2, leader.status().term());
                assertEquals(2, follower.status().term());
                long sentFinal = sent;
                assertTrue(TestCluster.await(WAIT, () -> leader.drops().total() - leaderBefore.total
                                + follower.drops().total() - followerBefore.total >= sentFinal),
                        () -> "every replayed frame dropped: sent " + sentFinal + ", leader " + leaderBefore.delta(leader.drops())
                                + ", follower " + followerBefore.delta(follower.drops()));
                assertEquals(sent, leader.drops().total() - leaderBefore.total + follower.drops().total() - followerBefore.total,
                        () -> "nothing but the replayed frames dropped: leader " + leaderBefore.delta(leader.drops())
                                + ", follower " + followerBefore.delta(follower.drops()));
                System.out.printf("replay loop: %d frames sent in %d s (%d captured from the leader, %d from the follower);"
                                + " %d quorum appends acked meanwhile, longest wait for an ack %d ms (%d acked in all)%n"
                                + "  dropped by the leader:   %s%n  dropped by the follower: %s%n",
                        sent, LOOP.toSeconds(), everyLeaderFrame.size(), everyFollowerFrame.size(), ackedDuringLoop,
                        writer.longestAckNanos.get() / 1_000_000, writer.acked.get(), leaderBefore.delta(leader.drops()),
                        followerBefore.delta(follower.drops()));
            }
        } finally {
            if (writer != null) {
                writer.stopAndJoin();
            }
            TestCluster.closeAll(nodes);
        }
    }

    /**
     * Sends {@code frame} {@link #ALONE} times to {@code node} and waits until that many were counted as
     * {@code reason} for {@code type}, and nothing else was dropped; quorum appends are acked meanwhile.
     */
    private static void replayAlone(FrameInjector injector, byte[] frame, ReplicationNode node, DropReason reason,
                                    FrameType type, Writer writer) throws InterruptedException {
        Snapshot before = new Snapshot(node.drops());
        long acked = writer.acked.get();
        for (int i = 0; i < ALONE; i++) {
            injector.send(frame);
        }
        assertTrue(TestCluster.await(WAIT, () -> node.drops().get(reason, type) - before.get(reason, type) == ALONE),
                () -> type + " replayed to " + node.config().nodeId() + ": expected " + ALONE + " dropped as " + reason
                        + ", counted " + before.delta(node.drops()));
        assertTrue(TestCluster.await(WAIT, () -> writer.acked.get() > acked + 10), () -> "quorum acks go on after "
                + type + " was replayed: " + writer.failure.get());
        assertEquals(ALONE, node.drops().total() - before.total, () -> "nothing else dropped: " + before.delta(node.drops()));
        assertNull(writer.failure.get());
    }

    /** The drop counters at one moment, by reason and type. */
    private static final class Snapshot {
        final long total;
        final long[][] counts = new long[DropReason.values().length][FrameType.values().length + 1];

        Snapshot(DropCounters drops) {
            total = drops.total();
            for (DropReason r : DropReason.values()) {
                counts[r.ordinal()][0] = drops.get(r, null);
                for (FrameType t : FrameType.values()) {
                    counts[r.ordinal()][t.ordinal() + 1] = drops.get(r, t);
                }
            }
        }

        long get(DropReason reason, FrameType type) {
            return counts[reason.ordinal()][type == null ? 0 : type.ordinal() + 1];
        }

        /** What was dropped since, as "REASON/TYPE=n" for each non-zero count. */
        String delta(DropCounters now) {
            StringBuilder out = new StringBuilder();
            for (DropReason r : DropReason.values()) {
                long none = now.get(r, null) - get(r, null);
                if (none != 0) {
                    out.append(r).append("/header=").append(none).append(' ');
                }
                for (FrameType t : FrameType.values()) {
                    long n = now.get(r, t) - get(r, t);
                    if (n != 0) {
                        out.append(r).append('/').append(t).append('=').append(n).append(' ');
                    }
                }
            }
            return out.toString().trim();
        }
    }

    /**
     * Every frame a node sends to one peer, read by an Aeron spy subscription on the node's own media driver: the
     * first {@link #KEPT_PER_TYPE} of each type and the latest of each type.
     */
    private static final class WireTap implements AutoCloseable {
        private static final int KEPT_PER_TYPE = 8;
        private final Aeron aeron;
        private final Subscription spy;
        private final Thread poller;
        private final Map<FrameType, byte[]> latest = new EnumMap<>(FrameType.class);
        private final Map<FrameType, List<byte[]>> kept = new EnumMap<>(FrameType.class);
        private volatile boolean running = true;

        WireTap(Path aeronDirectory, int peerPort) {
            aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDirectory.toString()));
            spy = aeron.addSubscription("aeron-spy:aeron:udp?endpoint=127.0.0.1:" + peerPort, ReplicationAgent.STREAM_ID);
            FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) -> {
                byte[] bytes = new byte[length];
                buffer.getBytes(offset, bytes);
                FrameType type = FrameType.of(bytes[Frame.TYPE_OFFSET] & 0xFF);
                if (type == null) {
                    return;
                }
                synchronized (this) {
                    latest.put(type, bytes);
                    List<byte[]> list = kept.computeIfAbsent(type, t -> new ArrayList<>());
                    if (list.size() < KEPT_PER_TYPE) {
                        list.add(bytes);
                    }
                }
            });
            poller = new Thread(() -> {
                while (running) {
                    if (spy.poll(assembler, 64) == 0) {
                        Thread.onSpinWait();
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            }, "wire-tap-" + peerPort);
            poller.setDaemon(true);
            poller.start();
        }

        synchronized boolean has(FrameType type) {
            return latest.containsKey(type);
        }

        synchronized String types() {
            return latest.keySet().toString();
        }

        /** The latest frame of each type: those of the live session. */
        synchronized Map<FrameType, byte[]> latest() {
            return new EnumMap<>(latest);
        }

        /** Every frame kept, the latest of each type included. */
        synchronized List<byte[]> all() {
            List<byte[]> out = new ArrayList<>();
            kept.values().forEach(out::addAll);
            out.addAll(latest.values());
            return out;
        }

        @Override
        public void close() {
            running = false;
            try {
                poller.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            aeron.close();
        }
    }

    /** Appends small excerpts in quorum mode, one after another, after one large one (sent in EXCERPT_PARTs). */
    private static final class Writer {
        final AtomicLong acked = new AtomicLong();
        final AtomicLong longestAckNanos = new AtomicLong();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Thread thread;
        private volatile boolean running = true;

        Writer(Path queueDirectory) {
            thread = new Thread(() -> {
                try (EnterpriseQueue queue = EnterpriseQueue.builder(queueDirectory).quorumAcks(ACK_TIMEOUT).build();
                     QueueAppender appender = queue.createAppender()) {
                    appender.write(new byte[LARGE_EXCERPT]);
                    byte[] small = new byte[64];
                    for (long i = 0; running; i++) {
                        small[0] = (byte) i;
                        long start = System.nanoTime();
                        appender.write(small); // returns once a majority holds it, or throws AckTimeoutException
                        long took = System.nanoTime() - start;
                        if (took > longestAckNanos.get()) {
                            longestAckNanos.set(took);
                        }
                        acked.incrementAndGet();
                        Thread.sleep(1); // a bounded rate: ~1,000 appends a second at most
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "quorum-writer");
            thread.setDaemon(true);
            thread.start();
        }

        void stopAndJoin() throws InterruptedException {
            running = false;
            thread.join(ACK_TIMEOUT.toMillis() * 2);
        }
    }
}
