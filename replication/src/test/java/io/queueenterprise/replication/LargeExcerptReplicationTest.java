package io.queueenterprise.replication;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Excerpts larger than one DATA batch (64 KiB) and than Aeron's message limit (1 MiB), up to the library's maximum
 * (16 MiB with the default blocks), mixed with small ones: shipped in EXCERPT_PART pieces and stored whole at the
 * same index, in async and quorum modes and across a follower restarted while it assembled one.
 */
@org.junit.jupiter.api.Tag("integration")
class LargeExcerptReplicationTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String QUEUE = "frames";

    @TempDir
    Path tmp;

    /** Small excerpts around large ones, the batch boundary on both sides, up to {@code max}. */
    private static int[] sizes(long max) {
        int batch = 64 * 1024 - 12; // the largest excerpt one DATA batch takes
        return new int[]{10, batch, batch + 1, 3, 70_000, 5, (1 << 20) + 1, 7, 5 << 20, 9, (int) max, 11, (int) max - 1, 13};
    }

    private static byte[] content(int size, long seed) {
        byte[] bytes = new byte[size];
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < size; i += 8) {
            long v = random.nextLong();
            for (int b = 0; b < 8 && i + b < size; b++) {
                bytes[i + b] = (byte) (v >>> (8 * b));
            }
        }
        return bytes;
    }

    @Test
    void anAsyncFollowerHoldsExcerptsUpToTheLibraryMaximumAtTheLeadersIndexes() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue(QUEUE, AckMode.ASYNC)));
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
            leader.promote(1);
            follower.follow("replica-0", 1);
            long last;
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, QUEUE)).build();
                 QueueAppender appender = queue.createAppender()) {
                assertEquals(16 << 20, queue.maxExcerptLength(), "the library's maximum with the default blocks");
                int[] sizes = sizes(queue.maxExcerptLength());
                for (int i = 0; i < sizes.length; i++) {
                    appender.write(content(sizes[i], i));
                }
                last = queue.lastIndex();
            }
            assertTrue(TestCluster.await(WAIT, () -> follower.status().queues().get(0).lastIndex() == last),
                    () -> "follower did not get every excerpt: " + follower.status());
            assertEquals(QueueStatus.State.LIVE, follower.status().queues().get(0).state(), () -> follower.status().toString());
            assertEquals(0, follower.bytesAssembling(QUEUE));
        }
        assertIdentical(cluster, 0, 1, sizes(16 << 20).length);
    }

    @Test
    void aQuorumAppendOfALargeExcerptReturnsOnceAMajorityHoldsItWhole() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 3, List.of(TestCluster.queue(QUEUE, AckMode.QUORUM)));
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode b = ReplicationNode.start(cluster.config(1));
             ReplicationNode c = ReplicationNode.start(cluster.config(2))) {
            leader.promote(1);
            b.follow("replica-0", 1);
            c.follow("replica-0", 1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, QUEUE)).quorumAcks(Duration.ofSeconds(30)).build();
                 QueueAppender appender = queue.createAppender()) {
                int[] sizes = sizes(queue.maxExcerptLength());
                for (int i = 0; i < sizes.length; i++) {
                    long index = appender.write(content(sizes[i], i));
                    assertTrue(leader.status().queues().get(0).quorumIndex() >= index,
                            "excerpt " + i + " of " + sizes[i] + " bytes: the append returned before a majority held it");
                }
                long last = queue.lastIndex();
                assertTrue(TestCluster.await(WAIT, () -> b.status().queues().get(0).lastIndex() == last
                        && c.status().queues().get(0).lastIndex() == last), () -> b.status() + " / " + c.status());
            }
        }
        assertIdentical(cluster, 0, 1, sizes(16 << 20).length);
        assertIdentical(cluster, 0, 2, sizes(16 << 20).length);
    }

    @Test
    void aFollowerClosedWhileAssemblingAnExcerptHoldsNoPartAndCompletesItAfterARestart() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue(QUEUE, AckMode.ASYNC)));
        int large = 8;
        int max;
        long last;
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0))) {
            leader.promote(1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, QUEUE)).build();
                 QueueAppender appender = queue.createAppender()) {
                max = (int) queue.maxExcerptLength();
                appender.write(content(5, -1));
                for (int i = 0; i < large; i++) {
                    appender.write(content(max, i));
                }
                last = queue.lastIndex();
            }
            long seen = 0;
            ReplicationNode follower = ReplicationNode.start(cluster.config(1)); // after the writes: it copies them all
            try {
                follower.follow("replica-0", 1);
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (seen == 0 && System.nanoTime() < deadline && follower.status().queues().get(0).lastIndex() < last) {
                    seen = follower.bytesAssembling(QUEUE);
                }
            } finally {
                follower.close();
            }
            assertTrue(seen > 0 && seen < max, "the follower was closed while it held part of an excerpt: " + seen + " bytes");

            Map<Long, byte[]> leaderCopy = QueueContents.read(cluster.queueDirectory(0, QUEUE));
            Map<Long, byte[]> stopped = QueueContents.read(cluster.queueDirectory(1, QUEUE));
            assertTrue(stopped.size() < 1 + large, "it stopped before the end: " + stopped.size());
            for (Map.Entry<Long, byte[]> e : stopped.entrySet()) {
                assertArrayEquals(leaderCopy.get(e.getKey()), e.getValue(), "a stored excerpt is whole and the leader's, at 0x"
                        + Long.toHexString(e.getKey()));
            }

            try (ReplicationNode restarted = ReplicationNode.start(cluster.config(1))) {
                assertTrue(TestCluster.await(WAIT, () -> restarted.status().queues().get(0).lastIndex() == last),
                        () -> "restarted follower did not complete: " + restarted.status());
            }
        }
        assertIdentical(cluster, 0, 1, 1 + large);
    }

    private static void assertIdentical(TestCluster cluster, int a, int b, int expectedCount) {
        Map<Long, byte[]> first = QueueContents.read(cluster.queueDirectory(a, QUEUE));
        assertEquals(expectedCount, first.size());
        assertNull(QueueContents.difference(first, QueueContents.read(cluster.queueDirectory(b, QUEUE))),
                "replica-" + b + " differs from replica-" + a);
    }
}
