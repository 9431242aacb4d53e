package io.queueenterprise.cli;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.node.AdminClient;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three {@code qe node} processes on UDP loopback with the real engine, driven only through their admin endpoints
 * and signals: quorum writes from this process into the leader's queue, a follower killed with SIGKILL and
 * restarted, the leader stopped with SIGTERM (graceful) and a follower promoted, the old leader back as a follower;
 * every replica ends with the same excerpts at the same indexes and every acknowledged message is there.
 */
@org.junit.jupiter.api.Tag("process")
class NodeProcessesTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String QUEUE = "orders";

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void failoverThroughTheCommandLineLosesNothingAcknowledged() throws Exception {
        List<String> acknowledged = new ArrayList<>();
        try (LocalCluster cluster = new LocalCluster(tmp.resolve("cluster"), List.of("127.0.0.1", "127.0.0.1", "127.0.0.1"),
                true, List.of(new LocalCluster.Queue(QUEUE, "FAST_DAILY", "NONE", "QUORUM", "5s")), "SLEEPING",
                LocalCluster::launchHere)) {
            for (int i = 0; i < 3; i++) {
                cluster.start(i);
            }
            AdminClient r0 = cluster.admin(0);
            assertEquals(NodeStatus.Role.LEADER, r0.promote(1).role());
            assertEquals(NodeStatus.Role.FOLLOWER, cluster.admin(1).follow("replica-0", 1).role());
            assertEquals(NodeStatus.Role.FOLLOWER, cluster.admin(2).follow("replica-0", 1).role());
            cluster.awaitAcknowledging(0, Duration.ofSeconds(30)); // its leader lease: a majority follows it

            write(cluster, 0, "term-1", 0, 200, acknowledged);
            long killed = cluster.pid(1);
            assertTrue(aeronDirectoriesOf(killed) == 1, "the running node's media driver directory names its PID");
            cluster.kill(1); // SIGKILL: no goodbye
            assertEquals(0, aeronDirectoriesOf(killed), "the killed node's media driver directory was removed");
            write(cluster, 0, "term-1", 200, 400, acknowledged); // replica-0 and replica-2 are a majority
            cluster.start(1);
            assertEquals(NodeStatus.Role.FOLLOWER, cluster.admin(1).status().role(), "the role survived SIGKILL");
            await(() -> durable(cluster, 1) >= lastIndex(cluster, 0), "replica-1 caught up");

            assertMetricsAndHealth(cluster);

            // The leader goes away gracefully; the most advanced follower is promoted at a higher term.
            assertEquals(143, cluster.stop(0), "SIGTERM: the JVM's exit after a graceful shutdown");
            assertTrue(Files.readString(cluster.log(0)).contains("qe node: replica-0 stopped"), Files.readString(cluster.log(0)));
            int next = durable(cluster, 1) >= durable(cluster, 2) ? 1 : 2;
            int other = 3 - next;
            assertEquals(NodeStatus.Role.LEADER, cluster.admin(next).promote(2).role());
            cluster.admin(other).follow(LocalCluster.nodeId(next), 2);
            cluster.awaitAcknowledging(next, Duration.ofSeconds(30)); // the lease's wait above term 1
            write(cluster, next, "term-2", 0, 100, acknowledged);
            cluster.start(0);
            cluster.admin(0).follow(LocalCluster.nodeId(next), 2);
            write(cluster, next, "term-2", 100, 150, acknowledged);

            await(() -> durable(cluster, 0) >= lastIndex(cluster, next) && durable(cluster, other) >= lastIndex(cluster, next),
                    "every replica caught up with the new leader");
        }
        // Stopped: compare what each replica holds, byte for byte, by index.
        ReplicaDigest[] digests = new ReplicaDigest[3];
        for (int i = 0; i < 3; i++) {
            digests[i] = ReplicaDigest.of(tmp.resolve("cluster").resolve(LocalCluster.nodeId(i)).resolve("data").resolve(QUEUE), "FAST_DAILY");
        }
        assertEquals(acknowledged.size(), digests[0].excerpts());
        assertNull(digests[0].differenceFrom(digests[1]));
        assertNull(digests[0].differenceFrom(digests[2]));
        for (int i = 0; i < 3; i++) {
            List<String> held = readAll(tmp.resolve("cluster").resolve(LocalCluster.nodeId(i)).resolve("data").resolve(QUEUE));
            assertEquals(acknowledged.size(), held.size(), "replica-" + i + ": excerpts held");
            for (int m = 0; m < held.size(); m++) {
                assertEquals(acknowledged.get(m), held.get(m), "replica-" + i + ", message " + m);
            }
        }
    }

    private static void assertMetricsAndHealth(LocalCluster cluster) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        String yaml = Files.readString(cluster.config(0));
        int metricsPort = Integer.parseInt(yaml.replaceAll("(?s).*metrics:\\n  bindAddress: [^\\n]+\\n  port: (\\d+).*", "$1"));
        String base = "http://127.0.0.1:" + metricsPort;
        String metrics = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
        assertTrue(metrics.contains("qe_node_role{node=\"replica-0\",role=\"LEADER\"} 1.0"), metrics);
        assertTrue(metrics.contains("qe_peer_connected{node=\"replica-0\",peer=\"replica-1\",queue=\"orders\"} 1.0"), metrics);
        assertTrue(metrics.matches("(?s).*qe_ack_latency_seconds_count\\{node=\"replica-0\",queue=\"orders\"} [1-9].*"), metrics);
        assertEquals(200, http.send(HttpRequest.newBuilder(URI.create(base + "/readyz")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
        assertEquals(200, http.send(HttpRequest.newBuilder(URI.create(base + "/healthz")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
    }

    /** Messages {@code prefix-from .. prefix-(to-1)} through a quorum appender on {@code replica}'s queue directory. */
    private static void write(LocalCluster cluster, int replica, String prefix, int from, int to, List<String> acknowledged) {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(replica, QUEUE)).quorumAcks(Duration.ofSeconds(10)).build();
             QueueAppender appender = queue.createAppender()) {
            for (int i = from; i < to; i++) {
                String message = prefix + "-" + i;
                appender.write(message.getBytes(StandardCharsets.UTF_8)); // returns once a majority holds it
                acknowledged.add(message);
            }
        }
    }

    /**
     * Every excerpt as stored, read with a raw Chronicle tailer: a plain queue's excerpt is the message itself.
     * (The library's own tailer on a node-hosted QUORUM queue serves only what the node published as held by a
     * majority; on a stopped follower that gate says nothing, so the raw bytes are what is compared.)
     */
    static List<String> readAll(Path dir) {
        List<String> messages = new ArrayList<>();
        try (SingleChronicleQueue queue = SingleChronicleQueueBuilder.binary(dir.toFile()).readOnly(true).build();
             ExcerptTailer tailer = queue.createTailer()) {
            while (true) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        return messages;
                    }
                    messages.add(new String(dc.wire().bytes().toByteArray(), StandardCharsets.UTF_8));
                }
            }
        }
    }

    /** Directories in /dev/shm whose Aeron CnC file names {@code pid} as its driver. */
    private static long aeronDirectoriesOf(long pid) throws java.io.IOException {
        try (java.util.stream.Stream<Path> dirs = Files.list(Path.of("/dev/shm"))) {
            return dirs.filter(d -> d.getFileName().toString().startsWith("qe-aeron-")).filter(d -> {
                try (java.nio.channels.FileChannel c = java.nio.channels.FileChannel.open(d.resolve("cnc.dat"))) {
                    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN);
                    return c.read(b, io.aeron.CncFileDescriptor.PID_FIELD_OFFSET) == 8 && b.getLong(0) == pid;
                } catch (java.io.IOException e) {
                    return false;
                }
            }).count();
        }
    }

    private static long durable(LocalCluster cluster, int replica) {
        try {
            return cluster.admin(replica).status().queues().get(0).durableIndex();
        } catch (Exception e) {
            return -1;
        }
    }

    private static long lastIndex(LocalCluster cluster, int replica) {
        try {
            return cluster.admin(replica).status().queues().get(0).lastIndex();
        } catch (Exception e) {
            return Long.MAX_VALUE;
        }
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError(what + ": not within " + WAIT);
    }
}
