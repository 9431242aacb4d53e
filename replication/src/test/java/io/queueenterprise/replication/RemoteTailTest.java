package io.queueenterprise.replication;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.protocol.client.TailMode;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.ExcerptDecryptionException;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueTailer;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteTailer;
import io.queueenterprise.replication.client.TailCounter;
import io.queueenterprise.replication.config.NodeConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Remote tailers against real nodes on UDP loopback: the same indexes and bytes as a local tailer on the leader's
 * files, read from a follower; from the start, the end and an index; INDEX_NOT_FOUND; credit holding the node back
 * while the application does not read; a tampered envelope refused with the library's typed error.
 */
@org.junit.jupiter.api.Tag("integration")
class RemoteTailTest {
    static final String QUEUE = "payments";
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    static NodeConfig.QueueSpec spec(AckMode mode) {
        return TestCluster.sealedQueue(QUEUE, mode);
    }

    /** (index, bytes) of every excerpt, read with the key by a local tailer. */
    static List<String> localRead(Path dir, KeyRing ring) {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(ring).readOnly(true).build();
             QueueTailer tailer = queue.createTailer()) {
            return drain(tailer, Integer.MAX_VALUE, Duration.ZERO);
        }
    }

    /** Reads up to {@code max} excerpts as "index=hex-hash:length", waiting up to {@code patience} for each. */
    static List<String> drain(QueueTailer tailer, int max, Duration patience) {
        List<String> out = new ArrayList<>();
        byte[] buffer = new byte[512 * 1024];
        long deadline = System.nanoTime() + patience.toNanos();
        while (out.size() < max) {
            int n = tailer.read(buffer);
            if (n < 0) {
                if (System.nanoTime() - deadline > 0) {
                    break;
                }
                Thread.onSpinWait();
                continue;
            }
            out.add(Long.toHexString(tailer.lastReadIndex()) + "=" + Arrays.hashCode(Arrays.copyOf(buffer, n)) + ":" + n);
            deadline = System.nanoTime() + patience.toNanos();
        }
        return out;
    }

    @Test
    void aFollowerServesTheSameIndexesAndBytesAsALocalTailerFromStartEndAndIndex() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 3, List.of(spec(AckMode.ASYNC))).serveClients();
        KeyRing ring = RemoteClientTest.newRing();
        ReplicationNode[] nodes = cluster.startNodes();
        try {
            nodes[0].promote(1);
            nodes[1].follow("replica-0", 1);
            nodes[2].follow("replica-0", 1);
            Path leaderDir = cluster.queueDirectory(0, QUEUE);
            RemoteClientTest.initialise(leaderDir, ring, false);
            Random random = new Random(42);
            try (EnterpriseQueue local = EnterpriseQueue.builder(leaderDir).name(QUEUE).encrypted(ring).build();
                 QueueAppender localAppender = local.createAppender();
                 RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                         .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 QueueAppender appender = remote.createAppender()) {
                for (int i = 0; i < 300; i++) {
                    byte[] message = new byte[1 + random.nextInt(200)];
                    random.nextBytes(message);
                    appender.write(message);
                }
                // local writers' excerpts (index-bound envelopes), one larger than a piece (sent in 8 KiB pieces)
                byte[] large = new byte[100_000];
                random.nextBytes(large);
                localAppender.write(large);
                localAppender.write("local small".getBytes(StandardCharsets.UTF_8));
                long last = localAppender.lastIndexAppended();
                assertTrue(TestCluster.await(WAIT, () -> nodes[1].status().queues().get(0).lastIndex() >= last));

                List<String> expected = localRead(leaderDir, ring);
                assertEquals(1 + 300 + 2, expected.size());
                String follower = cluster.clientAddresses().get(1);
                try (RemoteTailer tailer = remote.createTailer(TailMode.ALL, follower)) {
                    List<String> read = drain(tailer, expected.size(), Duration.ofSeconds(10));
                    assertEquals(expected, read, "from the start: the local tailer's indexes and bytes");
                    assertEquals(follower, host(tailer), "the follower served it");
                    assertEquals(-1, tailer.read(new byte[16]), "nothing more");

                    // from an index in the middle
                    long middle = Long.parseLong(expected.get(150).split("=")[0], 16);
                    assertTrue(tailer.moveToIndex(middle));
                    assertEquals(expected.subList(150, expected.size()), drain(tailer, expected.size() - 150, Duration.ofSeconds(10)));

                    // an index the queue does not hold
                    assertFalse(tailer.moveToIndex(last + 1000), "no such index");
                    assertTrue(nodes[1].clientGateway().tailEnds(ClientRefusal.INDEX_NOT_FOUND) >= 1, "refused INDEX_NOT_FOUND");

                    // from the end: only what is appended afterwards
                    tailer.toEnd();
                    assertEquals(-1, tailer.read(new byte[16]));
                    long a = appender.write("after end 1".getBytes(StandardCharsets.UTF_8));
                    long b = appender.write("after end 2".getBytes(StandardCharsets.UTF_8));
                    List<String> after = drain(tailer, 2, Duration.ofSeconds(10));
                    assertEquals(List.of(Long.toHexString(a), Long.toHexString(b)), after.stream().map(s -> s.split("=")[0]).toList());
                }
            }
        } finally {
            TestCluster.closeAll(nodes);
        }
    }

    private static String host(RemoteTailer tailer) {
        return tailer.servingNode().getHostString() + ":" + tailer.servingNode().getPort();
    }

    @Test
    void creditHoldsTheNodeBackWhileTheApplicationDoesNotReadAndAppendsKeepBeingAcknowledged() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 1, List.of(spec(AckMode.ASYNC))).serveClients();
        KeyRing ring = RemoteClientTest.newRing();
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0))) {
            node.promote(1);
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, false);
            try (RemoteQueue writer = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                    .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 QueueAppender appender = writer.createAppender();
                 RemoteQueue reader = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                         .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 RemoteTailer tailer = reader.createTailer()) {
                assertEquals(1, drain(tailer, 1, Duration.ofSeconds(10)).size(), "the tail is open");
                for (int i = 0; i < 2000; i++) {
                    appender.write(("message " + i).getBytes(StandardCharsets.US_ASCII)); // each acknowledged
                }
                Thread.sleep(500);
                long sent = node.clientGateway().tailCount(TailCounter.EXCERPTS_SENT);
                assertTrue(sent <= 1 + 256, "the node sent no more than the tailer's window while it did not read: " + sent);
                List<String> all = drain(tailer, 2000, Duration.ofSeconds(20));
                assertEquals(2000, all.size(), "everything arrives once the application reads");
            }
        }
    }

    @Test
    void aClientLeftAloneLongerThanAeronsDefaultLivenessStillWorks() throws Exception {
        // the client's thread drives its embedded media driver and Aeron client: an application that neither reads
        // nor writes for a while (12 s here; Aeron's default liveness is 10 s) must not find them closed
        TestCluster cluster = new TestCluster(tmp, 1, List.of(spec(AckMode.ASYNC))).serveClients();
        KeyRing ring = RemoteClientTest.newRing();
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0))) {
            node.promote(1);
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, false);
            try (RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                    .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 QueueAppender appender = remote.createAppender();
                 RemoteTailer tailer = remote.createTailer()) {
                appender.write("before".getBytes(StandardCharsets.US_ASCII));
                assertEquals(2, drain(tailer, 2, Duration.ofSeconds(10)).size());
                Thread.sleep(12_000);
                long index = appender.write("after".getBytes(StandardCharsets.US_ASCII));
                List<String> after = drain(tailer, 1, Duration.ofSeconds(10));
                assertEquals(List.of(Long.toHexString(index)), after.stream().map(s -> s.split("=")[0]).toList());
            }
        }
    }

    @Test
    void aTamperedEnvelopeIsRefusedWithTheLibrarysTypedErrorAndNeverReturned() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 1, List.of(spec(AckMode.ASYNC))).serveClients();
        KeyRing ring = RemoteClientTest.newRing();
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0))) {
            node.promote(1);
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, false);
            try (RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                    .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 QueueAppender appender = remote.createAppender()) {
                appender.write("genuine".getBytes(StandardCharsets.US_ASCII));
            }
            // flip the last byte (the tag) of the stored envelope in the node's mapped cycle file
            Path dir = cluster.queueDirectory(0, QUEUE);
            java.util.Map<Long, byte[]> stored = QueueContents.read(dir);
            byte[] envelope = stored.values().stream().reduce((x, y) -> y).orElseThrow();
            assertTrue(flipLastByteOf(dir, envelope), "found the stored envelope");
            try (RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                    .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 RemoteTailer tailer = remote.createTailer()) {
                byte[] buffer = new byte[256];
                assertEquals("created locally".length(), readWithin(tailer, buffer));
                long good = tailer.lastReadIndex();
                ExcerptDecryptionException e = assertThrows(ExcerptDecryptionException.class, () -> readWithin(tailer, buffer));
                assertEquals(io.queueenterprise.crypto.EnvelopeException.Reason.AUTHENTICATION_FAILED, e.reason(), e.getMessage());
                assertThrows(ExcerptDecryptionException.class, () -> tailer.read(buffer), "it stays on the excerpt: never returned");
                assertEquals(good, tailer.lastReadIndex());
                assertTrue(tailer.skip(), "skipped explicitly");
                assertEquals(-1, tailer.read(buffer));
            }
        }
    }

    private static boolean flipLastByteOf(Path dir, byte[] envelope) throws java.io.IOException {
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".cq4")).toList()) {
                byte[] bytes = java.nio.file.Files.readAllBytes(f);
                for (int i = 0; i + envelope.length <= bytes.length; i++) {
                    if (Arrays.equals(bytes, i, i + envelope.length, envelope, 0, envelope.length)) {
                        try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(f.toFile(), "rw")) {
                            file.seek(i + envelope.length - 1);
                            file.write(envelope[envelope.length - 1] ^ 0x01);
                        }
                        return true;
                    }
                }
            }
        }
        return false;
    }

    static int readWithin(QueueTailer tailer, byte[] buffer) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            int n = tailer.read(buffer);
            if (n >= 0) {
                return n;
            }
            Thread.onSpinWait();
        }
        return -1;
    }
}
