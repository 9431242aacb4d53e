package io.queueenterprise.replication;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueTailer;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import io.queueenterprise.replication.client.ClientDrop;
import io.queueenterprise.replication.config.NodeConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Remote clients against in-process nodes on UDP loopback: appends through the leader at the indexes a local tailer
 * reads, quorum acks, redirects from a follower, a failover, and the refusals (wrong credential, wrong key).
 */
@org.junit.jupiter.api.Tag("integration")
class RemoteClientTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String QUEUE = "payments";

    @TempDir
    Path tmp;

    private static NodeConfig.QueueSpec spec(AckMode mode) {
        return TestCluster.sealedQueue(QUEUE, mode);
    }

    static KeyRing newRing() {
        byte[] material = new byte[32];
        new SecureRandom().nextBytes(material);
        return KeyRing.single(MasterKey.of(1, material));
    }

    /** A key holder creates the queue (its descriptor records the key) with one local write, as an application would. */
    static void initialise(Path queueDir, KeyRing ring, boolean quorum) {
        TestCluster.authoriseWriters(queueDir, QUEUE, ring);
        EnterpriseQueue.Builder b = EnterpriseQueue.builder(queueDir).name(QUEUE).encrypted(ring);
        if (quorum) {
            b.quorumAcks(Duration.ofSeconds(10));
        }
        try (EnterpriseQueue queue = b.build(); QueueAppender appender = queue.createAppender()) {
            appender.write("created locally".getBytes(StandardCharsets.UTF_8));
        }
    }

    static List<String> readAll(Path dir, KeyRing ring) {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(ring).readOnly(true).build();
             QueueTailer tailer = queue.createTailer()) {
            List<String> out = new ArrayList<>();
            byte[] buffer = new byte[4096];
            int n;
            while ((n = tailer.read(buffer)) >= 0) {
                out.add(tailer.lastReadIndex() + "=" + new String(Arrays.copyOf(buffer, n), StandardCharsets.UTF_8));
            }
            return out;
        }
    }

    @Test
    void aRemoteClientAppendsThroughTheLeaderInQuorumModeAndFollowsAFailover() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 3, List.of(spec(AckMode.QUORUM))).serveClients();
        KeyRing ring = newRing();
        ReplicationNode[] nodes = cluster.startNodes();
        try {
            nodes[0].promote(1);
            nodes[1].follow("replica-0", 1);
            nodes[2].follow("replica-0", 1);
            initialise(cluster.queueDirectory(0, QUEUE), ring, true);
            List<Long> indexes = new ArrayList<>();
            // the client names a follower first: it is redirected to the leader
            List<String> addresses = List.of(cluster.clientAddresses().get(2), cluster.clientAddresses().get(1), cluster.clientAddresses().get(0));
            try (RemoteQueue remote = RemoteQueue.builder(addresses).queue(QUEUE).clientCredential(cluster.clientCredential)
                    .keyRing(ring).ackTimeout(Duration.ofSeconds(10)).build();
                 QueueAppender appender = remote.createAppender()) {
                assertEquals(cluster.peers.get(0).clientPort(), remote.connectedNode().getPort(), "connected to the leader");
                for (int i = 0; i < 50; i++) {
                    long index = appender.write(("remote " + i).getBytes(StandardCharsets.UTF_8));
                    assertTrue(nodes[0].status().queues().get(0).quorumIndex() >= index || quorumOf(nodes, index),
                            "acknowledged only once a majority holds it");
                    indexes.add(index);
                }
                // failover: replica-1 leads term 2; the client finds it by itself. A quorum of two may have been the
                // leader and replica-2 alone, with replica-1 behind (seen under load: promoted without the descriptor
                // or the last excerpts, it refused the client with NO_DESCRIPTOR). The operator promotes the replica
                // with the highest durable index among a majority; here replica-1 is made that replica first.
                long acknowledged = indexes.get(indexes.size() - 1);
                assertTrue(TestCluster.await(WAIT, () -> nodes[1].status().queues().get(0).lastIndex() >= acknowledged),
                        "replica-1 holds every acknowledged excerpt before it is promoted");
                nodes[0].close();
                nodes[0] = null;
                nodes[1].promote(2);
                nodes[2].follow("replica-1", 2);
                for (int i = 50; i < 80; i++) {
                    indexes.add(appender.write(("remote " + i).getBytes(StandardCharsets.UTF_8)));
                }
                assertEquals(cluster.peers.get(1).clientPort(), remote.connectedNode().getPort(), "follows the new leader");
            }
            long last = indexes.get(indexes.size() - 1);
            assertTrue(TestCluster.await(WAIT, () -> nodes[2].status().queues().get(0).lastIndex() >= last));
            List<String> read = readAll(cluster.queueDirectory(2, QUEUE), ring);
            assertEquals(81, read.size(), "one local excerpt and 80 remote ones, each once: " + read);
            for (int i = 0; i < 80; i++) {
                assertEquals(indexes.get(i) + "=remote " + i, read.get(i + 1), "the index the client got is where a local tailer reads it");
            }
            // the node never saw plaintext: its files hold envelopes only
            for (byte[] stored : QueueContents.read(cluster.queueDirectory(1, QUEUE)).values()) {
                assertFalse(new String(stored, StandardCharsets.ISO_8859_1).contains("remote "), "sealed bytes only on the node");
            }
        } finally {
            TestCluster.closeAll(nodes);
        }
    }

    private static boolean quorumOf(ReplicationNode[] nodes, long index) {
        int holding = 0;
        for (ReplicationNode n : nodes) {
            if (n != null && n.status().queues().get(0).lastIndex() >= index) {
                holding++;
            }
        }
        return holding >= 2;
    }

    @Test
    void aWrongCredentialIsRefusedWithAReasonAndAWrongKeyBeforeAnythingIsSent() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 1, List.of(spec(AckMode.ASYNC))).serveClients();
        KeyRing ring = newRing();
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0))) {
            node.promote(1);
            initialise(cluster.queueDirectory(0, QUEUE), ring, false);
            Path wrong = tmp.resolve("wrong-credential");
            byte[] secret = new byte[32];
            new SecureRandom().nextBytes(secret);
            Files.write(wrong, secret);
            RemoteQueueException e = assertThrows(RemoteQueueException.class, () -> RemoteQueue.builder(cluster.clientAddresses())
                    .queue(QUEUE).clientCredential(wrong).keyRing(ring).connectTimeout(Duration.ofSeconds(5)).build().close());
            assertEquals(RemoteQueueException.Reason.UNAUTHENTICATED, e.reason(), e.getMessage());
            assertTrue(node.clientGateway().drops(ClientDrop.UNAUTHENTICATED) >= 1, "the CONNECT was dropped and counted");

            RemoteQueueException key = assertThrows(RemoteQueueException.class, () -> RemoteQueue.builder(cluster.clientAddresses())
                    .queue(QUEUE).clientCredential(cluster.clientCredential).keyRing(newRing()).build().close());
            assertEquals(RemoteQueueException.Reason.DESCRIPTOR, key.reason(), key.getMessage());

            RemoteQueueException unknown = assertThrows(RemoteQueueException.class, () -> RemoteQueue.builder(cluster.clientAddresses())
                    .queue("nope").clientCredential(cluster.clientCredential).keyRing(ring).build().close());
            assertEquals(ClientRefusal.UNKNOWN_QUEUE, unknown.refusal(), unknown.getMessage());
            assertEquals(0, node.clientGateway().appended(), "nothing appended for any of them");
            assertEquals(1, QueueContents.read(cluster.queueDirectory(0, QUEUE)).size());
        }
    }

    @Test
    void aFollowerWithoutTheDescriptorYetRedirectsToTheLeader() throws Exception {
        // no key holder created the queue: neither node has a descriptor. The follower must still redirect (its
        // copy of a new queue's descriptor may simply not have arrived); the leader's refusal is the answer.
        TestCluster cluster = new TestCluster(tmp, 2, List.of(spec(AckMode.ASYNC))).serveClients();
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
            leader.promote(1);
            follower.follow("replica-0", 1);
            RemoteQueueException e = assertThrows(RemoteQueueException.class, () -> RemoteQueue.builder(List.of(cluster.clientAddresses().get(1)))
                    .queue(QUEUE).clientCredential(cluster.clientCredential).keyRing(newRing()).connectTimeout(Duration.ofSeconds(10)).build().close());
            assertEquals(ClientRefusal.NO_DESCRIPTOR, e.refusal(), e.getMessage());
            assertTrue(e.getMessage().contains("on node replica-0"), "the leader answered, not the follower: " + e.getMessage());
        }
    }

    @Test
    void badBuilderSettingsAreNamed() {
        RemoteQueueException e = assertThrows(RemoteQueueException.class, () -> RemoteQueue.builder("no-port").queue(QUEUE).build());
        assertEquals(RemoteQueueException.Reason.BAD_CONFIGURATION, e.reason());
        assertTrue(e.getMessage().contains("'no-port' is not host:port"), e.getMessage());
        e = assertThrows(RemoteQueueException.class, () -> RemoteQueue.builder("h:1").queue(QUEUE).clientCredential(tmp.resolve("absent"))
                .keyRing(newRing()).build());
        assertTrue(e.getMessage().contains("clientCredential"), e.getMessage());
        e = assertThrows(RemoteQueueException.class, () -> RemoteQueue.builder("h:1").queue(QUEUE).clientCredential(tmp)
                .keyRing(newRing()).ackTimeout(Duration.ZERO).build());
        assertTrue(e.getMessage().contains("ackTimeout"), e.getMessage());
    }
}
