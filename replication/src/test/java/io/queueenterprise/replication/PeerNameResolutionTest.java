package io.queueenterprise.replication;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer whose host name does not resolve yet (in Kubernetes: its pod does not exist yet) must not fail the node for
 * good: the leader starts, says why it cannot reach that peer, looks the name up again with backoff, and replicates
 * to it once the name resolves. The leader runs in a child JVM whose name lookups read a hosts file of the test's
 * ({@code jdk.net.hosts.file}, no DNS, JVM caches off), so that the name can start resolving mid-test without
 * touching the machine's own resolver settings.
 */
@org.junit.jupiter.api.Tag("process")
@org.junit.jupiter.api.Tag("slow")
class PeerNameResolutionTest {
    private static final String FOLLOWER_NAME = "replica-1.qe-name-resolution.test";

    @TempDir
    Path tmp;

    @Test
    void aLeaderStartsBeforeItsFollowersNameResolvesAndReplicatesOnceItDoes() throws Exception {
        TestCluster cluster = new TestCluster(tmp.resolve("cluster"), 2, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        Path hosts = tmp.resolve("hosts");
        Files.writeString(hosts, "127.0.0.1 localhost\n");
        List<String> leaderOptions = List.of("-Djdk.net.hosts.file=" + hosts, "-Dsun.net.inetaddr.ttl=0",
                "-Dsun.net.inetaddr.negative.ttl=0", "-Dqe.test.peerHost.replica-1=" + FOLLOWER_NAME);
        String spec = "orders:ASYNC:FAST_DAILY";
        Path logs = Path.of("target", "peer-name-resolution-logs");
        Files.deleteIfExists(logs.resolve("node-0.log"));
        try (NodeProcess leader = NodeProcess.start(cluster, 0, spec, logs.resolve("node-0.log"), leaderOptions);
             NodeProcess follower = NodeProcess.start(cluster, 1, spec, logs.resolve("node-1.log"))) {
            leader.command("promote 1");
            follower.command("follow replica-0 1");
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender appender = queue.createAppender()) {
                for (int i = 0; i < 20; i++) {
                    appender.write(("order " + i).getBytes(StandardCharsets.UTF_8));
                }
                Thread.sleep(2_000); // several lookups and follower handshakes, all in vain
                assertEquals(-1, follower.lastIndexOrUnknown(), "the follower got excerpts from a leader that cannot address it");
                String log = Files.readString(logs.resolve("node-0.log"));
                assertTrue(log.contains(FOLLOWER_NAME) && log.contains("does not resolve"), "no word of the unresolved peer: " + log);
                JsonNode unresolved = peerAddress(leader.statusJson(), "replica-1");
                assertEquals(FOLLOWER_NAME, unresolved.path("host").asText(), unresolved::toString);
                assertFalse(unresolved.path("resolved").asBoolean(), unresolved::toString);
                assertTrue(unresolved.path("problem").asText().contains("does not resolve"), unresolved::toString);
                assertTrue(unresolved.path("lastProblem").asText().contains("does not resolve"), unresolved::toString);
                assertTrue(unresolved.path("lastProblemAt").isTextual(), unresolved::toString);

                Files.writeString(hosts, "127.0.0.1 " + FOLLOWER_NAME + "\n", StandardOpenOption.APPEND); // the pod exists now
                long last = queue.lastIndex();
                assertTrue(TestCluster.await(Duration.ofSeconds(60), () -> follower.lastIndexOrUnknown() == last),
                        "the follower got nothing after its name resolved");
                // what remains once it resolved: no problem now, the last one kept with its time
                JsonNode resolved = peerAddress(leader.statusJson(), "replica-1");
                assertTrue(resolved.path("resolved").asBoolean() && resolved.path("problem").isNull(), resolved::toString);
                assertTrue(resolved.path("lastProblem").asText().contains("does not resolve"), resolved::toString);
                Instant at = Instant.parse(resolved.path("lastProblemAt").asText());
                assertTrue(Duration.between(at, Instant.now()).toMinutes() < 10, resolved::toString);
                // and the follower, which addresses the leader by its address, reports nothing
                JsonNode leaderSeenByFollower = peerAddress(follower.statusJson(), "replica-0");
                assertTrue(leaderSeenByFollower.path("resolved").asBoolean() && leaderSeenByFollower.path("lastProblem").isNull(),
                        leaderSeenByFollower::toString);
            }
        }
        assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, "orders")),
                QueueContents.read(cluster.queueDirectory(1, "orders"))));
    }

    private static JsonNode peerAddress(JsonNode status, String peer) {
        for (JsonNode p : status.path("peerAddresses")) {
            if (p.path("nodeId").asText().equals(peer)) {
                return p;
            }
        }
        throw new AssertionError("no peer address of " + peer + " in " + status);
    }

}
