package io.queueenterprise.replication;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueConfigurationException;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The leader lease with real nodes in one JVM (embedded drivers, UDP loopback), async mode, where nothing but the
 * lease stops a leader from acknowledging: a leader cut off from both followers stops acknowledging library and
 * remote appends and resumes when one returns; a former leader restarted in its old term after another was promoted
 * acknowledges nothing, while the new leader does.
 */
@org.junit.jupiter.api.Tag("integration")
class LeaderLeaseTest {
    private static final String QUEUE = "payments";
    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    @Test
    void aLeaderCutOffFromItsFollowersStopsAcknowledgingLibraryAndRemoteAppendsAndResumesWhenOneReturns() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 3, List.of(TestCluster.sealedQueue(QUEUE, AckMode.ASYNC)))
                .serveClients().leaseTimeout(LEASE);
        KeyRing ring = RemoteClientTest.newRing();
        ReplicationNode[] nodes = cluster.startNodes();
        Path leaderDir = cluster.queueDirectory(0, QUEUE);
        try {
            nodes[0].promote(1);
            nodes[1].follow("replica-0", 1);
            nodes[2].follow("replica-0", 1);
            TestCluster.authoriseWriters(leaderDir, QUEUE, ring);
            try (EnterpriseQueue local = EnterpriseQueue.builder(leaderDir).name(QUEUE).encrypted(ring).build();
                 QueueAppender appender = local.createAppender()) {
                // term 1: writable once a follower answered at it (a majority of 3 with the leader)
                assertTrue(TestCluster.await(WAIT, () -> acknowledged(appender)), "the leader acknowledges once it holds its lease");
                try (RemoteQueue remote = remote(cluster, 0, ring); QueueAppender remoteAppender = remote.createAppender()) {
                    remoteAppender.write("remote before".getBytes(StandardCharsets.UTF_8));
                }

                nodes[1].close();
                nodes[1] = null;
                nodes[2].close();
                nodes[2] = null;
                assertTrue(TestCluster.await(WAIT, () -> !acknowledged(appender)),
                        "cut off from every follower, the leader stops acknowledging library appends");
                long held = nodes[0].status().queues().get(0).lastIndex();
                QueueConfigurationException refused = assertThrows(QueueConfigurationException.class,
                        () -> appender.write("refused".getBytes(StandardCharsets.UTF_8)));
                assertEquals(QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE, refused.problem());
                assertTrue(refused.getMessage().contains("lease"), refused.getMessage());
                assertThrows(RemoteQueueException.class, () -> {
                    try (RemoteQueue remote = remote(cluster, 0, ring); QueueAppender remoteAppender = remote.createAppender()) {
                        remoteAppender.write("remote refused".getBytes(StandardCharsets.UTF_8));
                    }
                }, "a remote client finds no node that acknowledges");
                assertEquals(held, nodes[0].status().queues().get(0).lastIndex(), "nothing refused was written");

                nodes[1] = ReplicationNode.start(cluster.config(1)); // follows replica-0 at term 1 again (persisted)
                assertTrue(TestCluster.await(WAIT, () -> acknowledged(appender)), "a majority again: acknowledging again");
                try (RemoteQueue remote = remote(cluster, 0, ring); QueueAppender remoteAppender = remote.createAppender()) {
                    remoteAppender.write("remote after".getBytes(StandardCharsets.UTF_8));
                }
            }
        } finally {
            TestCluster.closeAll(nodes);
        }
    }

    @Test
    void aFormerLeaderRestartedInItsOldTermAcknowledgesNothingWhileTheNewLeaderDoes() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 3, List.of(TestCluster.queue(QUEUE, AckMode.ASYNC))).leaseTimeout(LEASE);
        ReplicationNode[] nodes = cluster.startNodes();
        try {
            nodes[0].promote(1);
            nodes[1].follow("replica-0", 1);
            nodes[2].follow("replica-0", 1);
            try (EnterpriseQueue q = EnterpriseQueue.builder(cluster.queueDirectory(0, QUEUE)).build();
                 QueueAppender appender = q.createAppender()) {
                assertTrue(TestCluster.await(WAIT, () -> acknowledged(appender)), "the first leader acknowledges");
            }
            nodes[0].close();
            nodes[0] = null;
            nodes[1].promote(2);
            nodes[2].follow("replica-1", 2);
            nodes[0] = ReplicationNode.start(cluster.config(0));
            assertEquals(NodeStatus.Role.LEADER, nodes[0].status().role(), "restarted in its persisted role");
            assertEquals(1, nodes[0].status().term());
            try (EnterpriseQueue oldQueue = EnterpriseQueue.builder(cluster.queueDirectory(0, QUEUE)).build();
                 QueueAppender old = oldQueue.createAppender();
                 EnterpriseQueue newQueue = EnterpriseQueue.builder(cluster.queueDirectory(1, QUEUE)).build();
                 QueueAppender current = newQueue.createAppender()) {
                long held = nodes[0].status().queues().get(0).lastIndex();
                // the new leader waits out any older lease (one timeout and a margin after a majority answered at
                // term 2); the former leader is tried all along and never acknowledges
                assertTrue(TestCluster.await(WAIT, () -> {
                    assertTrue(!acknowledged(old), "the restarted former leader acknowledged at its old term");
                    return acknowledged(current);
                }), "the new leader acknowledges");
                for (int i = 0; i < 20; i++) {
                    assertTrue(!acknowledged(old), "the restarted former leader acknowledged at its old term");
                    assertTrue(acknowledged(current), "the new leader keeps acknowledging");
                    Thread.sleep(50);
                }
                assertEquals(held, nodes[0].status().queues().get(0).lastIndex(), "nothing was written at the old term");
            }
        } finally {
            TestCluster.closeAll(nodes);
        }
    }

    /** A remote client that knows only {@code node}, waiting at most 3 s for an acknowledgement. */
    private static RemoteQueue remote(TestCluster cluster, int node, KeyRing ring) {
        return RemoteQueue.builder(List.of(cluster.clientAddresses().get(node))).queue(QUEUE)
                .clientCredential(cluster.clientCredential).keyRing(ring).ackTimeout(Duration.ofSeconds(3)).build();
    }

    /** One append: true when acknowledged, false when refused for want of a lease (nothing written). */
    private static boolean acknowledged(QueueAppender appender) {
        try {
            appender.write("lease probe".getBytes(StandardCharsets.UTF_8));
            return true;
        } catch (QueueConfigurationException e) {
            if (e.problem() != QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE) {
                throw e;
            }
            return false;
        }
    }
}
