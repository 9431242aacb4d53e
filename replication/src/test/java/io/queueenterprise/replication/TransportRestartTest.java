package io.queueenterprise.replication;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The embedded Aeron client and driver run on the duty thread (INVOKER mode): a stall of that thread longer than their
 * liveness timeout ends the client, which closes every publication and subscription. The node notices and restarts
 * the pair in place; peers handshake again and replication resumes from where each follower stands.
 */
class TransportRestartTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path tmp;

    @Test
    void aNodeWhoseAeronClientClosedRestartsItAndReplicationResumes() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
            leader.promote(1);
            follower.follow("replica-0", 1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender appender = queue.createAppender()) {
                write(appender, 0, 10);
                assertTrue(TestCluster.await(WAIT, () -> lastIndex(follower) == queue.lastIndex()));

                follower.closeAeronClientForTest();
                write(appender, 10, 20);
                assertTrue(TestCluster.await(WAIT, () -> lastIndex(follower) == queue.lastIndex()),
                        () -> "the follower did not resume after its Aeron client closed: " + follower.status()
                                + " transport: " + follower.transportProblem());
                assertEquals(1, follower.transportRestarts());
                assertNull(follower.transportProblem());

                leader.closeAeronClientForTest();
                write(appender, 20, 30);
                assertTrue(TestCluster.await(WAIT, () -> lastIndex(follower) == queue.lastIndex()),
                        () -> "replication did not resume after the leader's Aeron client closed: " + leader.status());
                assertEquals(1, leader.transportRestarts());
            }
        }
        assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, "orders")),
                QueueContents.read(cluster.queueDirectory(1, "orders"))));
    }

    /** A real stall (SIGSTOP) past a short, test-only liveness timeout: Aeron's own "service interval exceeded". */
    @Test
    void aFollowerStalledPastItsAeronLivenessTimeoutRestartsItsClientAndCatchesUp() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        String spec = "orders:ASYNC:FAST_DAILY";
        Path logs = Path.of("target", "transport-restart-logs");
        List<String> shortLiveness = List.of("-D" + io.queueenterprise.replication.engine.ReplicationAgent.LIVENESS_TIMEOUT_PROPERTY + "=2000");
        try (NodeProcess leader = NodeProcess.start(cluster, 0, spec, logs.resolve("node-0.log"));
             NodeProcess follower = NodeProcess.start(cluster, 1, spec, logs.resolve("node-1.log"), shortLiveness)) {
            leader.command("promote 1");
            follower.command("follow replica-0 1");
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender appender = queue.createAppender()) {
                write(appender, 0, 1);
                assertTrue(TestCluster.await(WAIT, () -> lastIndex(follower) == queue.lastIndex()), "replicating before the stall");
                follower.signal("STOP");
                try {
                    Thread.sleep(5_000); // 2.5 times the liveness timeout
                    write(appender, 1, 100);
                } finally {
                    follower.signal("CONT");
                }
                long last = queue.lastIndex();
                assertTrue(TestCluster.await(WAIT, () -> lastIndex(follower) == last),
                        () -> "the follower did not catch up after a stall past its Aeron liveness timeout: " + status(follower));
            }
        }
        assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, "orders")),
                QueueContents.read(cluster.queueDirectory(1, "orders"))));
    }

    private static long lastIndex(ReplicationNode node) {
        return node.status().queues().get(0).lastIndex();
    }

    private static long lastIndex(NodeProcess node) {
        try {
            return node.status().lastIndex();
        } catch (Exception e) {
            return Long.MIN_VALUE;
        }
    }

    private static String status(NodeProcess node) {
        try {
            return node.status().toString();
        } catch (Exception e) {
            return "no status: " + e;
        }
    }

    private static void write(QueueAppender appender, int from, int to) {
        for (int i = from; i < to; i++) {
            appender.write(("order " + i).getBytes(StandardCharsets.UTF_8));
        }
    }
}
