package io.queueenterprise.replication;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueConfigurationException;
import io.queueenterprise.queue.QueueDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** In-process nodes with real embedded media drivers on UDP loopback. */
@org.junit.jupiter.api.Tag("integration")
class ReplicationTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    @Test
    void followersHoldTheLeadersExcerptsAtTheSameIndexesIncludingALateOne() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 3, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
            leader.promote(1);
            follower.follow("replica-0", 1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender appender = queue.createAppender()) {
                for (int i = 0; i < 500; i++) {
                    appender.write(("order " + i).getBytes(StandardCharsets.UTF_8));
                }
                assertTrue(TestCluster.await(WAIT, () -> follower.status().queues().get(0).lastIndex() == queue.lastIndex()),
                        () -> "follower did not catch up: " + follower.status());
                // a follower that starts late copies everything, then goes on live
                try (ReplicationNode late = ReplicationNode.start(cluster.config(2))) {
                    late.follow("replica-0", 1);
                    for (int i = 500; i < 700; i++) {
                        appender.write(("order " + i).getBytes(StandardCharsets.UTF_8));
                    }
                    assertTrue(TestCluster.await(WAIT, () -> late.status().queues().get(0).lastIndex() == queue.lastIndex()
                                    && follower.status().queues().get(0).lastIndex() == queue.lastIndex()),
                            () -> "followers did not catch up: " + late.status() + " " + follower.status());
                    assertTrue(TestCluster.await(WAIT, () -> leader.status().queues().get(0).quorumIndex() == queue.lastIndex()),
                            () -> "quorum index: " + leader.status());
                    assertEquals(QueueStatus.State.LIVE, late.status().queues().get(0).state());
                }
            }
        }
        Map<Long, byte[]> onLeader = QueueContents.read(cluster.queueDirectory(0, "orders"));
        assertEquals(700, onLeader.size());
        assertNull(QueueContents.difference(onLeader, QueueContents.read(cluster.queueDirectory(1, "orders"))));
        assertNull(QueueContents.difference(onLeader, QueueContents.read(cluster.queueDirectory(2, "orders"))));
    }

    @Test
    void aFollowerRefusesLibraryAppendersAndTheTermIsNeverReused() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
            leader.promote(3);
            follower.follow("replica-0", 3);
            try (EnterpriseQueue leaderQueue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender appender = leaderQueue.createAppender()) {
                appender.write(new byte[]{1});
                // no sleep between polls: the first moment the follower holds the excerpt, it holds the descriptor
                // too (the queue did not exist when it joined; a follower with excerpts and no descriptor cannot
                // serve the queue once promoted)
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (follower.status().queues().get(0).lastIndex() != leaderQueue.lastIndex()) {
                    assertTrue(System.nanoTime() < deadline, "the excerpt did not reach the follower");
                    Thread.onSpinWait();
                }
                assertTrue(Files.exists(cluster.queueDirectory(1, "orders").resolve(QueueDescriptor.FILE_NAME)),
                        "the follower holds an excerpt before the queue's descriptor");
            }
            try (EnterpriseQueue followerQueue = EnterpriseQueue.builder(cluster.queueDirectory(1, "orders")).build()) {
                QueueConfigurationException refused = assertThrows(QueueConfigurationException.class, followerQueue::createAppender);
                assertEquals(QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE, refused.problem());
            }
            assertThrows(StaleTermException.class, () -> leader.promote(3));
            assertThrows(StaleTermException.class, () -> follower.follow("replica-0", 2));
            assertThrows(IllegalArgumentException.class, () -> follower.follow("replica-9", 4));
            assertThrows(StaleTermException.class, () -> follower.promote(3), "a follower at T is not promoted at T");
            // the operator fences every answering replica at T before it chooses whom to promote at T (operator.md)
            follower.fence(4);
            leader.fence(4);
            follower.promote(4);
            assertEquals(NodeStatus.Role.LEADER, follower.status().role());
            assertEquals(4, follower.status().term());
            leader.follow("replica-1", 4);
            assertThrows(StaleTermException.class, () -> leader.promote(4), "T has its leader: a node following it is not promoted at T");
            assertThrows(StaleTermException.class, () -> follower.promote(4), "nor is T's leader promoted at T again");
            follower.fence(5);
            follower.promote(6); // back to leading at a new term, for the restart below
            leader.follow("replica-1", 6);
        }
        // the persisted term survives a restart
        try (ReplicationNode again = ReplicationNode.start(cluster.config(0))) {
            assertEquals(6, again.status().term());
            assertEquals(NodeStatus.Role.FOLLOWER, again.status().role());
            assertThrows(StaleTermException.class, () -> again.promote(6));
        }
    }

    @Test
    void aSecondNodeOnTheSameDataDirectoryIsRefusedAndTheAeronDirectoryGoesWithTheNode() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 1, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        java.nio.file.Path aeron = ReplicationNode.aeronDirectoryOf(cluster.config(0));
        try (ReplicationNode first = ReplicationNode.start(cluster.config(0))) {
            assertTrue(java.nio.file.Files.isDirectory(aeron), "one fixed Aeron directory per data directory: " + aeron);
            ReplicationException refused = assertThrows(ReplicationException.class, () -> ReplicationNode.start(cluster.config(0)));
            assertTrue(refused.getMessage().contains("already running"), refused.getMessage());
            assertEquals(NodeStatus.Role.STANDBY, first.status().role(), "the running node is untouched");
        }
        assertFalse(java.nio.file.Files.exists(aeron), "closed: its shared memory is gone");
    }
}
