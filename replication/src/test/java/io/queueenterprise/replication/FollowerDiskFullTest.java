package io.queueenterprise.replication;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.SmallFileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower whose data directory is a real small file system (a tmpfs this test mounts and unmounts; root only)
 * that fills up: it stops at a whole excerpt in state DISK_FULL (never a half-written excerpt, never a gap), the
 * leader goes on, and once space is freed the follower catches up to an identical copy by itself.
 */
@org.junit.jupiter.api.Tag("integration")
class FollowerDiskFullTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** What the follower's queue keeps free: twice Chronicle's default 64 MiB block (ReplicaStore). */
    private static final long RESERVE = 128L << 20;

    @TempDir
    Path tmp;

    @Test
    void aFullFollowerStopsAtAWholeExcerptSaysDiskFullAndCatchesUpOnceSpaceIsFreed() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        try (SmallFileSystem small = SmallFileSystem.mount(cluster.dataDirectory(1), 200)) {
            Path followerData = small.path();
            Path filler = followerData.resolve("filler");
            try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
                 ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
                leader.promote(1);
                follower.follow("replica-0", 1);
                // leave the follower about 8 MiB above its reserve: another tenant of its volume
                long usable = Files.getFileStore(followerData).getUsableSpace();
                Files.write(filler, new byte[(int) Math.max(0, usable - RESERVE - (8L << 20))]);
                try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                     QueueAppender appender = queue.createAppender()) {
                    byte[] excerpt = new byte[4096];
                    for (int i = 0; i < 4000; i++) { // 16 MiB: twice the follower's room
                        Arrays.fill(excerpt, (byte) i);
                        appender.write(excerpt);
                    }
                    assertTrue(TestCluster.await(WAIT, () -> state(follower) == QueueStatus.State.DISK_FULL),
                            () -> "the follower did not report DISK_FULL: " + follower.status());
                    QueueStatus full = follower.status().queues().get(0);
                    assertTrue(full.stateDetail().contains("cannot store excerpt"), () -> "the status says why: " + full);
                    assertEquals(0, full.resyncs().count(), full::toString);
                    long held = follower.status().queues().get(0).lastIndex();
                    assertTrue(held < queue.lastIndex(), "it stopped before the end");
                    assertEquals(queue.lastIndex(), leader.status().queues().get(0).lastIndex(), "the leader went on");
                    assertPrefix(read(cluster, 0), read(cluster, 1));

                    Files.delete(filler);
                    assertTrue(TestCluster.await(WAIT, () -> state(follower) == QueueStatus.State.LIVE
                                    && follower.status().queues().get(0).lastIndex() == queue.lastIndex()),
                            () -> "the follower did not catch up once space was freed: " + follower.status());
                    QueueStatus.Resyncs resyncs = follower.status().queues().get(0).resyncs();
                    assertEquals(QueueStatus.ResyncCause.DISK_ROOM_AGAIN, resyncs.lastCause(), resyncs::toString);
                    assertTrue(resyncs.count() >= 1 && resyncs.lastAt() != null, resyncs::toString);
                }
            }
            assertNull(QueueContents.difference(read(cluster, 0), read(cluster, 1)), "identical copies");
        }
    }

    private static QueueStatus.State state(ReplicationNode node) {
        return node.status().queues().get(0).state();
    }

    private static Map<Long, byte[]> read(TestCluster cluster, int node) {
        return QueueContents.read(cluster.queueDirectory(node, "orders"));
    }

    /** The follower holds exactly the leader's first excerpts: same indexes, same bytes, no gap. */
    private static void assertPrefix(Map<Long, byte[]> leader, Map<Long, byte[]> follower) {
        assertTrue(follower.size() > 0 && follower.size() < leader.size(), "a proper prefix: " + follower.size() + " of " + leader.size());
        Map<Long, byte[]> prefix = new TreeMap<>();
        leader.entrySet().stream().limit(follower.size()).forEach(e -> prefix.put(e.getKey(), e.getValue()));
        assertNull(QueueContents.difference(prefix, follower), "the follower's excerpts are the leader's first ones");
    }
}
