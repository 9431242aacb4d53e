package io.queueenterprise.replication.node;

import io.queueenterprise.replication.LoopbackPorts;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.ReplicationNode;
import io.queueenterprise.replication.config.NodeConfig;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Retention with the real engine: per-second cycles, a one-second age bound, retention every 200 ms on both
 * replicas. While the follower is connected and caught up, the leader's retention keeps deleting old cycles and
 * replication goes on; a follower that was away while retention deleted what it needs comes back to a clear
 * BEHIND_RETENTION (on both sides, and in the metrics), never to a silent gap.
 */
@org.junit.jupiter.api.Tag("integration")
class RetentionWithEngineTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;
    final List<NodeConfig.Peer> peers = new ArrayList<>();
    Path credential;
    Path token;

    NodeConfig config(int node) {
        NodeConfig.QueueSpec orders = new NodeConfig.QueueSpec("orders", "TEST_SECONDLY", NodeConfig.Encryption.NONE,
                AckMode.ASYNC, Duration.ofSeconds(1), new NodeConfig.Retention(Optional.of(Duration.ofSeconds(1)), Optional.empty()));
        return new NodeConfig(NodeConfig.SCHEMA_VERSION, "replica-" + node, tmp.resolve("node-" + node), peers, credential,
                List.of(orders), new NodeConfig.Admin("127.0.0.1", 0, token), new NodeConfig.Metrics("127.0.0.1", 0),
                NodeConfig.IdleStrategySpec.SLEEPING).withIdentityKeyFile(tmp.resolve("identity-" + node + ".key"));
    }

    QueueNode start(int node) throws IOException {
        NodeConfig config = config(node);
        return QueueNode.start(config, ReplicationNode.start(config), Duration.ofMillis(200));
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aFollowerAwayWhileRetentionDeletedWhatItNeedsIsToldBehindRetention() throws Exception {
        credential = tmp.resolve("peer-credential");
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        Files.write(credential, secret);
        token = Files.writeString(tmp.resolve("admin-token"), "retention-test-token-0123456789");
        for (int i = 0; i < 3; i++) {
            try (io.queueenterprise.crypto.IdentityKey identity = io.queueenterprise.crypto.IdentityKey.generate(new SecureRandom())) {
                Files.writeString(tmp.resolve("identity-" + i + ".key"), identity.seedHex());
                peers.add(new NodeConfig.Peer("replica-" + i, "127.0.0.1", LoopbackPorts.freeUdpPort(), 0, identity.publicKeyText()));
            }
        }
        Path leaderQueue = tmp.resolve("node-0/orders");
        try (QueueNode leader = start(0)) {
            leader.engine().promote(1);
            long followerDurable;
            try (QueueNode follower = start(1)) {
                follower.engine().follow("replica-0", 1);
                // Connected and caught up: cycles keep rolling and being deleted on both, replication goes on.
                writeFor(leaderQueue, Duration.ofMillis(2500));
                await(() -> queue(follower).durableIndex() == queue(leader).lastIndex(), "the follower caught up");
                followerDurable = queue(follower).durableIndex();
            }
            // The follower is away; the leader writes on and retention deletes the cycles the follower would need next.
            writeFor(leaderQueue, Duration.ofMillis(3000));
            long needed = followerDurable;
            await(() -> queue(leader).firstIndex() > needed + 1, () -> "retention deleted the follower's next cycle: "
                    + leader.engine().status() + " files " + cycleFiles(leaderQueue));
            assertTrue(TestRollCycles.TEST_SECONDLY.toCycle(queue(leader).firstIndex()) > TestRollCycles.TEST_SECONDLY.toCycle(needed));

            try (QueueNode back = start(1)) {
                assertEquals(NodeStatus.Role.FOLLOWER, back.engine().status().role(), "it remembers whom it follows");
                await(() -> queue(back).state() == QueueStatus.State.BEHIND_RETENTION, "the follower says BEHIND_RETENTION");
                assertEquals(followerDurable, queue(back).durableIndex(), "and has skipped nothing");
                await(() -> queue(leader).peers().stream().anyMatch(p -> p.nodeId().equals("replica-1")
                        && p.state() == QueueStatus.State.BEHIND_RETENTION), "the leader sees it too");
                String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                        "http://127.0.0.1:" + back.metricsPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
                assertTrue(metrics.contains("qe_queue_state{node=\"replica-1\",queue=\"orders\",state=\"BEHIND_RETENTION\"} 1.0"), metrics);
                String leaderMetrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                        "http://127.0.0.1:" + leader.metricsPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
                assertTrue(leaderMetrics.matches("(?s).*qe_retention_deleted_files_total\\{node=\"replica-0\",queue=\"orders\"} [1-9].*"),
                        leaderMetrics);
            }
        }
    }

    private static QueueStatus queue(QueueNode node) {
        return node.engine().status().queues().get(0);
    }

    /** One excerpt every 50 ms for {@code duration}: several one-second cycles. */
    private static void writeFor(Path dir, Duration duration) throws InterruptedException {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).rollCycle(TestRollCycles.TEST_SECONDLY).build();
             QueueAppender appender = queue.createAppender()) {
            long end = System.nanoTime() + duration.toNanos();
            int i = 0;
            while (System.nanoTime() < end) {
                appender.write(("excerpt " + i++).getBytes(StandardCharsets.UTF_8));
                Thread.sleep(50);
            }
        }
    }

    private static List<String> cycleFiles(Path dir) {
        try (java.util.stream.Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".cq4")).sorted().toList();
        } catch (IOException e) {
            return List.of(e.toString());
        }
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        await(condition, () -> what);
    }

    private static void await(BooleanSupplier condition, java.util.function.Supplier<String> what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError(what.get() + ": not within " + WAIT);
    }
}
