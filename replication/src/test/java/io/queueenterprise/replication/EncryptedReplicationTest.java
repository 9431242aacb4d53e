package io.queueenterprise.replication;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueTailer;
import io.queueenterprise.replication.config.NodeConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An encrypted queue replicated by nodes that hold no key: followers store the sealed excerpts and the leader's
 * authenticated descriptor; with the key, a reader opens a follower's copy; after a failover the new leader's
 * application seals under its own writer epochs and every replica still reads back.
 */
@org.junit.jupiter.api.Tag("integration")
class EncryptedReplicationTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    @Test
    void followersWithoutKeysHoldSealedExcerptsThatOpenWithTheKeyAndSurviveAFailover() throws Exception {
        NodeConfig.QueueSpec spec = new NodeConfig.QueueSpec("payments", "FAST_DAILY", NodeConfig.Encryption.AES_128_CTR_POLY1305,
                AckMode.ASYNC, Duration.ofSeconds(5), NodeConfig.Retention.unbounded());
        TestCluster cluster = new TestCluster(tmp, 2, List.of(spec));
        byte[] material = new byte[32];
        new SecureRandom().nextBytes(material);
        KeyRing ring = KeyRing.single(MasterKey.of(1, material));
        try (ReplicationNode a = ReplicationNode.start(cluster.config(0));
             ReplicationNode b = ReplicationNode.start(cluster.config(1))) {
            a.promote(1);
            b.follow("replica-0", 1);
            long last;
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "payments")).name("payments").encrypted(ring).build();
                 QueueAppender appender = queue.createAppender()) {
                for (int i = 0; i < 100; i++) {
                    appender.write(("secret payment " + i).getBytes(StandardCharsets.UTF_8));
                }
                last = queue.lastIndex();
            }
            assertTrue(TestCluster.await(WAIT, () -> b.status().queues().get(0).lastIndex() == last));
            Map<Long, byte[]> sealed = QueueContents.read(cluster.queueDirectory(1, "payments"));
            sealed.values().forEach(bytes -> assertFalse(new String(bytes, StandardCharsets.ISO_8859_1).contains("secret"),
                    "the follower stores sealed bytes only"));
            // with the key, the follower's copy reads back (its descriptor is the leader's, authenticated)
            assertEquals(100, readAll(cluster.queueDirectory(1, "payments"), ring).size());

            // failover: B leads term 2, A follows; the application on B seals with its own epochs
            b.promote(2);
            a.follow("replica-1", 2);
            long newLast;
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(1, "payments")).encrypted(ring).build();
                 QueueAppender appender = queue.createAppender()) {
                for (int i = 100; i < 150; i++) {
                    appender.write(("secret payment " + i).getBytes(StandardCharsets.UTF_8));
                }
                newLast = queue.lastIndex();
            }
            assertTrue(TestCluster.await(WAIT, () -> a.status().queues().get(0).lastIndex() == newLast),
                    () -> "A did not catch up: " + a.status());
        }
        assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, "payments")),
                QueueContents.read(cluster.queueDirectory(1, "payments"))));
        List<String> onA = readAll(cluster.queueDirectory(0, "payments"), ring);
        assertEquals(150, onA.size());
        for (int i = 0; i < 150; i++) {
            assertEquals("secret payment " + i, onA.get(i));
        }
    }

    @Test
    void aKeyRotatedMidStreamReachesTheFollowersDescriptorAndEverythingOpensThere() throws Exception {
        NodeConfig.QueueSpec spec = new NodeConfig.QueueSpec("payments", "FAST_DAILY", NodeConfig.Encryption.AES_128_CTR_POLY1305,
                AckMode.ASYNC, Duration.ofSeconds(5), NodeConfig.Retention.unbounded());
        TestCluster cluster = new TestCluster(tmp, 2, List.of(spec));
        Path keys = tmp.resolve("keys");
        java.nio.file.Files.createDirectories(keys);
        writeKey(keys, 1);
        try (ReplicationNode a = ReplicationNode.start(cluster.config(0));
             ReplicationNode b = ReplicationNode.start(cluster.config(1))) {
            a.promote(1);
            b.follow("replica-0", 1);
            // the follower is connected before the queue (and its descriptor) exists on the leader
            assertTrue(TestCluster.await(WAIT, () -> a.status().queues().get(0).peers().get(0).connected()));
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "payments")).name("payments")
                    .encrypted(keys).build();
                 QueueAppender appender = queue.createAppender()) {
                for (int i = 0; i < 50; i++) {
                    appender.write(("secret payment " + i).getBytes(StandardCharsets.UTF_8));
                }
                writeKey(keys, 2); // rotation: key 2 active; its fingerprint enters the descriptor on its first write
                assertTrue(queue.reloadKeys());
                for (int i = 50; i < 100; i++) {
                    appender.write(("secret payment " + i).getBytes(StandardCharsets.UTF_8));
                }
                long last = queue.lastIndex();
                byte[] leaderDescriptor = java.nio.file.Files.readAllBytes(cluster.queueDirectory(0, "payments").resolve("queue-enterprise.properties"));
                assertTrue(TestCluster.await(WAIT, () -> b.status().queues().get(0).lastIndex() == last
                        && java.util.Arrays.equals(leaderDescriptor, readDescriptor(cluster.queueDirectory(1, "payments")))),
                        "the follower holds every excerpt and the rotated descriptor");
            }
        }
        try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(1, "payments")).encrypted(keys).readOnly(true).build();
             QueueTailer tailer = queue.createTailer()) {
            byte[] buffer = new byte[256];
            for (int i = 0; i < 100; i++) {
                int n = tailer.read(buffer);
                assertEquals("secret payment " + i, new String(buffer, 0, n, StandardCharsets.UTF_8));
            }
        }
    }

    private static byte[] readDescriptor(Path dir) {
        try {
            return java.nio.file.Files.readAllBytes(dir.resolve("queue-enterprise.properties"));
        } catch (java.io.IOException e) {
            return new byte[0];
        }
    }

    private static void writeKey(Path keys, int id) throws java.io.IOException {
        byte[] material = new byte[32];
        new SecureRandom().nextBytes(material);
        java.nio.file.Files.writeString(keys.resolve(id + ".key"), java.util.HexFormat.of().formatHex(material) + "\n");
        java.nio.file.Files.writeString(keys.resolve("active"), Integer.toString(id));
    }

    private static List<String> readAll(Path dir, KeyRing ring) {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(ring).readOnly(true).build();
             QueueTailer tailer = queue.createTailer()) {
            java.util.ArrayList<String> out = new java.util.ArrayList<>();
            byte[] buffer = new byte[256];
            int n;
            while ((n = tailer.read(buffer)) >= 0) {
                out.add(new String(Arrays.copyOf(buffer, n), StandardCharsets.UTF_8));
            }
            return out;
        }
    }
}
