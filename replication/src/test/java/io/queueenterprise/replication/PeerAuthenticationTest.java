package io.queueenterprise.replication;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.replication.engine.DropReason;
import io.queueenterprise.replication.session.PeerCredential;
import io.queueenterprise.replication.session.SessionCrypto;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameEncoder;
import io.queueenterprise.replication.wire.FrameType;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Who may speak: frames from anyone without the peer credential, or with the wrong term, move nothing and are counted. */
@org.junit.jupiter.api.Tag("integration")
class PeerAuthenticationTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path tmp;

    @Test
    void forgedMalformedAndWrongTermFramesAreDroppedCountedAndMoveNothing() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        PeerCredential credential = PeerCredential.load(cluster.credential);
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0));
             FrameInjector injector = new FrameInjector(cluster.peers.get(0).replicationPort())) {
            node.promote(5);
            // 1. garbage
            byte[] garbage = new byte[100];
            new SecureRandom().nextBytes(garbage);
            injector.send(garbage);
            assertTrue(TestCluster.await(WAIT, () -> node.drops().get(DropReason.MALFORMED) == 1), "malformed counted");
            // 2. a well-formed CHALLENGE from someone without the credential
            byte[] wrongKey = new byte[32];
            new SecureRandom().nextBytes(wrongKey);
            injector.send(challenge(SessionCrypto.handshakeMac(PeerCredential.of(wrongKey)), 5));
            assertTrue(TestCluster.await(WAIT, () -> node.drops().get(DropReason.UNAUTHENTICATED) == 1), "unauthenticated counted");
            // 3. a session frame of no session
            injector.send(heartbeat(123456789L));
            assertTrue(TestCluster.await(WAIT, () -> node.drops().get(DropReason.UNKNOWN_SESSION) == 1), "unknown session counted");
            // 4. an authentic handshake frame with a higher term: it must not move the node
            SessionCrypto.FrameMac handshake = SessionCrypto.handshakeMac(credential);
            injector.send(challenge(handshake, 99));
            assertTrue(TestCluster.await(WAIT, () -> node.drops().get(DropReason.TERM_AHEAD) == 1), "term ahead counted");
            // 5. ... and with a lower term: refused as stale
            injector.send(challenge(handshake, 4));
            assertTrue(TestCluster.await(WAIT, () -> node.drops().get(DropReason.STALE_TERM) == 1), "stale term counted");
            // 6. a frame claiming to come from the node itself, or from no peer
            injector.send(challengeFrom(handshake, 0, 5));
            injector.send(challengeFrom(handshake, 7, 5));
            assertTrue(TestCluster.await(WAIT, () -> node.drops().get(DropReason.UNKNOWN_PEER) == 2), "unknown peer counted");
            // 7. a frame of the earlier frame version (one session key for both directions): refused by its version
            byte[] versionOne = challenge(handshake, 5);
            versionOne[Frame.VERSION_OFFSET] = 1;
            injector.send(versionOne);
            assertTrue(TestCluster.await(WAIT, () -> node.drops().get(DropReason.UNSUPPORTED_VERSION) == 1),
                    "earlier version counted");
            assertEquals(1, node.drops().get(DropReason.MALFORMED), "not as malformed");

            NodeStatus status = node.status();
            assertEquals(5, status.term(), "no frame moves the term");
            assertEquals(NodeStatus.Role.LEADER, status.role());
            assertEquals(8, status.queues().get(0).framesDropped());
        }
    }

    @Test
    void aPeerWithoutTheCredentialGetsNoExcerpt() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        Path wrong = tmp.resolve("other-credential");
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        Files.write(wrong, secret);
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode intruder = ReplicationNode.start(cluster.config(1, wrong))) {
            leader.promote(1);
            intruder.follow("replica-0", 1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender appender = queue.createAppender()) {
                appender.write(new byte[]{42});
            }
            assertTrue(TestCluster.await(WAIT, () -> leader.drops().get(DropReason.UNAUTHENTICATED) >= 2),
                    "the intruder's challenges are refused and counted: " + leader.status());
            assertEquals(-1, intruder.status().queues().get(0).lastIndex());
            assertEquals(List.of(false), leader.status().queues().get(0).peers().stream().map(QueueStatus.PeerProgress::connected).toList());
        }
    }

    private static byte[] challenge(SessionCrypto.FrameMac mac, long term) {
        return challengeFrom(mac, 1, term);
    }

    private static byte[] challengeFrom(SessionCrypto.FrameMac mac, int sender, long term) {
        ExpandableArrayBuffer b = new ExpandableArrayBuffer(128);
        int length = new FrameEncoder().begin(b, 0, FrameType.CHALLENGE, sender, term, 42, 0).bytes(new byte[128], 0, 128).finish();
        mac.sign(b, 0, length);
        byte[] out = new byte[length];
        b.getBytes(0, out);
        return out;
    }

    private static byte[] heartbeat(long session) {
        ExpandableArrayBuffer b = new ExpandableArrayBuffer(128);
        int length = new FrameEncoder().begin(b, 0, FrameType.HEARTBEAT, 1, 5, session, 1).i64(0).u16(0).finish();
        byte[] out = new byte[length];
        b.getBytes(0, out);
        return out;
    }
}
