package io.queueenterprise.replication;

import io.queueenterprise.crypto.IdentityKey;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.replication.engine.DropReason;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 19 section 2, the node's half of identities the operator cannot render per pod: three nodes on real Aeron, no
 * pin in their documents, each drawing its identity key into its own key file at first start, all reading one
 * peer-identities file (as the operator's ConfigMap) that is absent at first. They replicate unpinned; the true keys
 * pinned, no session is closed and replication goes on; a wrong key pinned for one follower closes its session with
 * the leader (counted) and it gets no more excerpts while its handshakes are refused; the pin fixed, it reconnects
 * and catches up.
 */
@Tag("integration")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DrawnIdentityPinningTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    @Test
    void pinsFromTheFileKeepTrueSessionsAndCloseAWrongOne() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 3, java.util.List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        for (int i = 0; i < 3; i++) {
            cluster.peers.set(i, cluster.peers.get(i).withIdentityKey(null)); // nothing pinned by the documents
        }
        Path pins = tmp.resolve("peer-identities");
        ReplicationNode[] nodes = new ReplicationNode[3];
        try {
            for (int i = 0; i < 3; i++) {
                Path keyFile = tmp.resolve("drawn-" + i + ".key");
                assertTrue(Files.notExists(keyFile));
                nodes[i] = ReplicationNode.start(cluster.config(i).withDrawnIdentity(keyFile, true, pins));
            }
            ReplicationNode leader = nodes[0];
            leader.promote(1);
            nodes[1].follow("replica-0", 1);
            nodes[2].follow("replica-0", 1);
            append(cluster, 1);
            awaitCaughtUp(leader, nodes[1]);
            awaitCaughtUp(leader, nodes[2]);

            String[] keys = new String[3];
            for (int i = 0; i < 3; i++) {
                NodeStatus.Identity identity = nodes[i].status().identity();
                assertTrue(identity.persistent(), "drawn into its key file");
                keys[i] = identity.publicKey();
                assertEquals(IdentityKey.fingerprint(IdentityKey.parsePublicKey(keys[i])), identity.fingerprint());
            }
            assertEquals(false, peer(leader, "replica-2").identityPinned());

            // The operator pins what each node reported: the sessions proved exactly those keys, none is closed.
            writePins(pins, keys);
            assertTrue(TestCluster.await(WAIT, () -> fingerprintOf(leader, "replica-1") != null
                    && fingerprintOf(leader, "replica-2") != null), "the live sessions proved the pinned keys: " + leader.status());
            assertEquals(IdentityKey.fingerprint(IdentityKey.parsePublicKey(keys[2])), fingerprintOf(leader, "replica-2"));
            assertTrue(peer(leader, "replica-2").identityPinned());
            append(cluster, 2);
            awaitCaughtUp(leader, nodes[1]);
            awaitCaughtUp(leader, nodes[2]);
            for (ReplicationNode node : nodes) {
                assertEquals(0, node.identitySessionsClosed(), "no session was closed for the true pins");
                assertEquals(0, node.peerIdentitiesRefusals());
            }

            // A wrong key pinned for replica-2: its session with the leader is closed and its handshakes refused.
            String[] wrong = keys.clone();
            try (IdentityKey stranger = IdentityKey.generate(new SecureRandom())) {
                wrong[2] = stranger.publicKeyText();
            }
            long refusedBefore = leader.drops().getByPeer(DropReason.UNAUTHENTICATED, 2);
            writePins(pins, wrong);
            assertTrue(TestCluster.await(WAIT, () -> leader.identitySessionsClosed() == 1),
                    "the leader closed replica-2's session: " + leader.status());
            assertTrue(TestCluster.await(WAIT, () -> leader.drops().getByPeer(DropReason.UNAUTHENTICATED, 2) > refusedBefore),
                    "replica-2 reconnects with its true key, which is not the pin: refused");
            append(cluster, 3);
            awaitCaughtUp(leader, nodes[1]);
            long leaderLast = lastIndex(leader);
            assertTrue(lastIndex(nodes[2]) < leaderLast, "replica-2 got no excerpt since: " + nodes[2].status());
            assertEquals(null, fingerprintOf(leader, "replica-2"), "no session with replica-2");
            assertEquals(0, nodes[1].identitySessionsClosed(), "replica-1's session with the leader untouched");

            // The pin fixed: replica-2 proves it and catches up.
            writePins(pins, keys);
            awaitCaughtUp(leader, nodes[2]);
            assertEquals(1, leader.identitySessionsClosed());
        } finally {
            TestCluster.closeAll(nodes);
        }
    }

    /** As the kubelet swaps a ConfigMap: the reader sees the old content or the new, never half of it. */
    private static void writePins(Path pins, String[] keys) throws Exception {
        Path next = pins.resolveSibling(pins.getFileName() + ".next");
        StringBuilder text = new StringBuilder("# pinned by the operator\n");
        for (int i = 0; i < keys.length; i++) {
            text.append("replica-").append(i).append(' ').append(keys[i]).append('\n');
        }
        Files.writeString(next, text);
        Files.move(next, pins, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private static void append(TestCluster cluster, int value) {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
             QueueAppender appender = queue.createAppender()) {
            appender.write(new byte[]{(byte) value});
        }
    }

    private static void awaitCaughtUp(ReplicationNode leader, ReplicationNode follower) throws InterruptedException {
        assertTrue(TestCluster.await(WAIT, () -> lastIndex(leader) >= 0 && lastIndex(follower) == lastIndex(leader)),
                follower.config().nodeId() + " holds the leader's last index: " + follower.status() + " / " + leader.status());
    }

    private static long lastIndex(ReplicationNode node) {
        return node.status().queues().get(0).lastIndex();
    }

    private static NodeStatus.PeerAddress peer(ReplicationNode node, String id) {
        return node.status().peerAddresses().stream().filter(p -> p.nodeId().equals(id)).findFirst().orElseThrow();
    }

    private static String fingerprintOf(ReplicationNode node, String id) {
        return peer(node, id).identityFingerprint();
    }
}
