package io.queueenterprise.replication;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The embedded Aeron client and driver run on the duty thread (INVOKER mode): a stall of that thread longer than their
 * liveness timeout ends the client, which closes every publication and subscription. The node notices and restarts
 * the pair in place; peers handshake again and replication resumes from where each follower stands.
 */
@org.junit.jupiter.api.Tag("process")
@org.junit.jupiter.api.Tag("slow")
class TransportRestartTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path tmp;

    @Test
    void aNodeWhoseAeronClientClosedRestartsItAndReplicationResumes() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode follower = ReplicationNode.start(cluster.config(1));
             AdminEndpoint followerAdmin = AdminEndpoint.start(follower)) {
            leader.promote(1);
            follower.follow("replica-0", 1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender appender = queue.createAppender()) {
                write(appender, 0, 10);
                assertTrue(TestCluster.await(WAIT, () -> lastIndex(follower) == queue.lastIndex()));
                JsonNode before = followerAdmin.status().path("transport");
                assertTrue(before.path("up").asBoolean(), before::toString);
                assertEquals(0, before.path("restarts").asLong(), before::toString);
                assertTrue(before.path("lastRestartCause").isNull() && before.path("lastRestartAt").isNull(), before::toString);

                follower.closeAeronClientForTest();
                write(appender, 10, 20);
                assertTrue(TestCluster.await(WAIT, () -> lastIndex(follower) == queue.lastIndex()),
                        () -> "the follower did not resume after its Aeron client closed: " + follower.status()
                                + " transport: " + follower.transportProblem());
                assertEquals(1, follower.transportRestarts());
                assertNull(follower.transportProblem());
                // what remains in the status once it recovered: up, one restart, why and when
                JsonNode after = followerAdmin.status().path("transport");
                assertTrue(after.path("up").asBoolean() && after.path("problem").isNull(), after::toString);
                assertEquals(1, after.path("restarts").asLong(), after::toString);
                assertTrue(after.path("lastRestartCause").asText().contains("client or driver closed"), after::toString);
                assertRecent(after.path("lastRestartAt"));

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

    /**
     * A restart that fails (the node's UDP port taken by another socket meanwhile: Aeron's own bind error) is in the
     * status while it lasts, and once the port is free the node's next try (every 5 s) succeeds; the status keeps the
     * count and the latest cause.
     */
    @Test
    void aTransportRestartThatFailsIsReportedWhileItLastsAndTheRecoveryAfter() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        int followerPort = cluster.peers.get(1).replicationPort();
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode follower = ReplicationNode.start(cluster.config(1));
             AdminEndpoint followerAdmin = AdminEndpoint.start(follower)) {
            leader.promote(1);
            follower.follow("replica-0", 1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender appender = queue.createAppender()) {
                write(appender, 0, 10);
                assertTrue(TestCluster.await(WAIT, () -> lastIndex(follower) == queue.lastIndex()));

                DatagramSocket[] squatter = new DatagramSocket[1];
                follower.closeTransportForTest(() -> squatter[0] = bind(followerPort));
                try {
                    JsonNode[] seen = new JsonNode[1];
                    assertTrue(TestCluster.await(WAIT, () -> {
                        seen[0] = followerAdmin.status().path("transport");
                        return seen[0].path("problem").asText().contains("could not be restarted");
                    }), () -> "no failed restart in the status: " + seen[0]);
                    JsonNode down = seen[0];
                    assertFalse(down.path("up").asBoolean(), down::toString);
                    assertTrue(down.path("restarts").asLong() >= 1, down::toString);
                    assertTrue(down.path("lastRestartCause").asText().contains("client or driver closed")
                            || down.path("lastRestartCause").asText().contains("still down"), down::toString);
                    assertRecent(down.path("lastRestartAt"));
                } finally {
                    if (squatter[0] != null) {
                        squatter[0].close();
                    }
                }
                write(appender, 10, 20);
                assertTrue(TestCluster.await(WAIT, () -> lastIndex(follower) == queue.lastIndex()),
                        () -> "the follower did not resume once its port was free: " + followerAdmin.status());
                JsonNode after = followerAdmin.status().path("transport");
                assertTrue(after.path("up").asBoolean() && after.path("problem").isNull(), after::toString);
                assertTrue(after.path("restarts").asLong() >= 2, () -> "a failed restart and the one that worked: " + after);
                assertTrue(after.path("lastRestartCause").asText().contains("still down after a failed restart"), after::toString);
                assertRecent(after.path("lastRestartAt"));
            }
        }
        assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, "orders")),
                QueueContents.read(cluster.queueDirectory(1, "orders"))));
    }

    /** Binds {@code port} on loopback with no address sharing, as any other program could. */
    private static DatagramSocket bind(int port) {
        try {
            DatagramSocket socket = new DatagramSocket(null);
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress("127.0.0.1", port));
            return socket;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("cannot take port " + port + " while the node's transport is closed", e);
        }
    }

    /** An ISO-8601 time of this test run (within the last 10 minutes). */
    private static void assertRecent(JsonNode isoTime) {
        assertTrue(isoTime.isTextual(), () -> "not a time: " + isoTime);
        Instant at = Instant.parse(isoTime.asText());
        assertTrue(Duration.between(at, Instant.now()).abs().toMinutes() < 10, () -> "not now: " + isoTime);
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
                assertTrue(TestCluster.await(WAIT, () -> follower.lastIndexOrUnknown() == queue.lastIndex()), "replicating before the stall");
                follower.signal("STOP");
                try {
                    Thread.sleep(5_000); // 2.5 times the liveness timeout
                    write(appender, 1, 100);
                } finally {
                    follower.signal("CONT");
                }
                long last = queue.lastIndex();
                assertTrue(TestCluster.await(WAIT, () -> follower.lastIndexOrUnknown() == last),
                        () -> "the follower did not catch up after a stall past its Aeron liveness timeout: " + status(follower));
                JsonNode transport = follower.statusJson().path("transport");
                assertTrue(transport.path("up").asBoolean() && transport.path("restarts").asLong() >= 1, transport::toString);
                assertTrue(transport.path("lastRestartCause").asText().contains("client or driver closed"), transport::toString);
                assertRecent(transport.path("lastRestartAt"));
            }
        }
        assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, "orders")),
                QueueContents.read(cluster.queueDirectory(1, "orders"))));
    }

    private static long lastIndex(ReplicationNode node) {
        return node.status().queues().get(0).lastIndex();
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
