package io.queueenterprise.replication.engine;

import io.queueenterprise.crypto.IdentityKey;
import io.queueenterprise.replication.AckMode;
import io.queueenterprise.crypto.EphemeralKey;
import io.queueenterprise.replication.session.PeerCredential;
import io.queueenterprise.replication.session.PeerIdentities;
import io.queueenterprise.replication.session.SessionCrypto;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameEncoder;
import io.queueenterprise.replication.wire.FrameType;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Both sides of the handshake, driven frame by frame (no transport: nothing they send goes anywhere). A follower takes
 * a CHALLENGE_RESPONSE only while it is CHALLENGING: one replayed from the network into an established session would
 * otherwise start the same session over, with its sequence numbers back at zero, and let every frame already seen in
 * it be replayed. A leader does not answer a CHALLENGE it answered lately: a replayed one would otherwise replace the
 * nonces of a handshake in hand. A handshake frame signed by another identity than that of the node it names is
 * dropped, whatever else it holds.
 */
@Tag("unit")
class HandshakeReplayTest {
    @TempDir
    Path data;

    private final java.security.SecureRandom random = new java.security.SecureRandom();
    private final IdentityKey a = IdentityKey.generate(random);
    private final IdentityKey b = IdentityKey.generate(random);

    /** Identities as node {@code self} sees them: its own key, both public keys. */
    private PeerIdentities identities(int self) {
        IdentityKey own = IdentityKey.of(hexToBytes((self == 0 ? a : b).seedHex()));
        return PeerIdentities.of(own, java.util.List.of(a.publicKey(), b.publicKey()), self);
    }

    private static byte[] hexToBytes(String hex) {
        return java.util.HexFormat.of().parseHex(hex);
    }

    @Test
    void aReplayedChallengeResponseDoesNotRestartAnEstablishedSession() throws Exception {
        PeerCredential credential = PeerCredential.of(new byte[32]);
        EngineSettings settings = EngineSettings.builder().nodeId("b").dataDirectory(data)
                .peer("a", "127.0.0.1", 7001, 0).peer("b", "127.0.0.1", 7002, 0)
                .queue("orders", "FAST_DAILY", EngineSettings.Encryption.NONE, AckMode.ASYNC).build();
        QueueReplica[] queues = {new QueueReplica(settings.queues().get(0), 0)}; // still opening: takes no part
        PeerLink leader = new PeerLink(0, "a", null, 1);
        PeerLink[] peers = {leader, null};
        SessionCrypto.FrameMac handshakeMac = SessionCrypto.handshakeMac(credential);
        ControlFrames control = new ControlFrames(1, handshakeMac, null);
        DropCounters drops = new DropCounters();
        FollowerSession follower = new FollowerSession(queues, drops, control);
        RoleController roles = new RoleController(settings, new NodeStateFile(data), queues, peers,
                new LeaderSession(1, queues, peers, drops, control), follower);
        PeerSessions sessions = new PeerSessions(settings, credential, identities(1), control, roles, peers, queues, follower,
                new java.util.concurrent.atomic.AtomicLong());
        roles.follow("a", 1);

        sessions.followerLink(System.nanoTime()); // sends CHALLENGE
        assertEquals(PeerLink.State.CHALLENGING, leader.state());
        assertEquals(DropReason.UNAUTHENTICATED, sessions.onChallengeResponse(leader,
                challengeResponse(handshakeMac, leader, b), System.nanoTime()), "signed by the follower's own key, not a's");
        assertEquals(PeerLink.State.CHALLENGING, leader.state());
        Frame response = challengeResponse(handshakeMac, leader, a);
        assertNull(sessions.onChallengeResponse(leader, response, System.nanoTime()));
        assertEquals(PeerLink.State.ESTABLISHED, leader.state());
        leader.rxSequence = 42; // frames seen in the session

        assertEquals(DropReason.UNEXPECTED, sessions.onChallengeResponse(leader, response, System.nanoTime()));
        assertEquals(PeerLink.State.ESTABLISHED, leader.state());
        assertEquals(42, leader.rxSequence, "a replay must not reset the session's sequence");
        credential.close();
    }

    @Test
    void aReplayedChallengeIsNotAnsweredAndLeavesTheSessionAndTheHandshakeInHandAlone() throws Exception {
        PeerCredential credential = PeerCredential.of(new byte[32]);
        EngineSettings settings = EngineSettings.builder().nodeId("a").dataDirectory(data)
                .peer("a", "127.0.0.1", 7001, 0).peer("b", "127.0.0.1", 7002, 0)
                .queue("orders", "FAST_DAILY", EngineSettings.Encryption.NONE, AckMode.ASYNC).build();
        QueueReplica[] queues = {new QueueReplica(settings.queues().get(0), 0)};
        PeerLink followerLink = new PeerLink(1, "b", null, 1);
        PeerLink[] peers = {null, followerLink};
        SessionCrypto.FrameMac handshakeMac = SessionCrypto.handshakeMac(credential);
        ControlFrames control = new ControlFrames(0, handshakeMac, null);
        DropCounters drops = new DropCounters();
        FollowerSession follower = new FollowerSession(queues, drops, control);
        RoleController roles = new RoleController(settings, new NodeStateFile(data), queues, peers,
                new LeaderSession(0, queues, peers, drops, control), follower);
        java.util.concurrent.atomic.AtomicLong established = new java.util.concurrent.atomic.AtomicLong();
        PeerSessions sessions = new PeerSessions(settings, credential, identities(0), control, roles, peers, queues, follower,
                established);
        roles.promote(1);

        byte[] followerNonce = new byte[32];
        Arrays.fill(followerNonce, (byte) 5);
        byte[] ephemeral = EphemeralKey.generate(random).publicKey();
        byte[] forged = a.sign(SessionCrypto.signedChallenge(77, 1, 0, 1, followerNonce, ephemeral)); // a's key, b's name
        assertEquals(DropReason.UNAUTHENTICATED, sessions.onChallenge(followerLink,
                handshakeFrame(handshakeMac, FrameType.CHALLENGE, 78, concat(followerNonce, ephemeral, forged))));
        assertEquals(PeerLink.State.DISCONNECTED, followerLink.state(), "an unsigned CHALLENGE is not answered");
        byte[] signature = b.sign(SessionCrypto.signedChallenge(77, 1, 0, 1, followerNonce, ephemeral));
        Frame challenge = handshakeFrame(handshakeMac, FrameType.CHALLENGE, 77, concat(followerNonce, ephemeral, signature));
        assertNull(sessions.onChallenge(followerLink, challenge));
        assertEquals(PeerLink.State.RESPONDING, followerLink.state());
        byte[] leaderNonce = followerLink.responderNonce.clone();
        byte[] transcript = SessionCrypto.signedTranscript("initiator", 77, 1, 0, 1, followerNonce, leaderNonce, ephemeral,
                followerLink.responderEphemeral);
        assertEquals(DropReason.UNAUTHENTICATED, sessions.onProof(followerLink,
                handshakeFrame(handshakeMac, FrameType.PROOF, 77, a.sign(transcript)), System.nanoTime()), "a's key, b's name");
        assertEquals(PeerLink.State.RESPONDING, followerLink.state());
        assertNull(sessions.onProof(followerLink, handshakeFrame(handshakeMac, FrameType.PROOF, 77, b.sign(transcript)),
                System.nanoTime()));
        assertEquals(PeerLink.State.ESTABLISHED, followerLink.state());
        assertEquals(1, established.get());
        followerLink.rxSequence = 42;

        assertEquals(DropReason.REPLAYED, sessions.onChallenge(followerLink, challenge), "replayed CHALLENGE");
        assertEquals(PeerLink.State.ESTABLISHED, followerLink.state(), "no CHALLENGE_RESPONSE owed, no PROOF awaited");
        assertArrayEquals(leaderNonce, followerLink.responderNonce, "the handshake's nonces are left alone");
        assertEquals(42, followerLink.rxSequence);
        assertEquals(77, followerLink.sessionId);
        assertEquals(1, established.get());
        credential.close();
    }

    private static Frame handshakeFrame(SessionCrypto.FrameMac mac, FrameType type, long session, byte[] body)
            throws Exception {
        ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        FrameEncoder encoder = new FrameEncoder();
        encoder.begin(buffer, 0, type, 1, 1, session, 0).bytes(body, 0, body.length);
        int length = encoder.finish();
        mac.sign(buffer, 0, length);
        return new Frame().wrap(buffer, 0, length);
    }

    /** What the leader answers to the follower's CHALLENGE, signed by {@code signer}. */
    private Frame challengeResponse(SessionCrypto.FrameMac mac, PeerLink leader, IdentityKey signer) throws Exception {
        byte[] responderNonce = new byte[32];
        Arrays.fill(responderNonce, (byte) 7);
        byte[] ephemeral = EphemeralKey.generate(random).publicKey();
        byte[] signature = signer.sign(SessionCrypto.signedTranscript("responder", leader.pendingSessionId, 1, 0, 1,
                leader.initiatorNonce, responderNonce, leader.initiatorEphemeral, ephemeral));
        ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        FrameEncoder encoder = new FrameEncoder();
        encoder.begin(buffer, 0, FrameType.CHALLENGE_RESPONSE, 0, 1, leader.pendingSessionId, 0)
                .bytes(leader.initiatorNonce, 0, 32).bytes(responderNonce, 0, 32).bytes(ephemeral, 0, 32)
                .bytes(signature, 0, 64);
        int length = encoder.finish();
        mac.sign(buffer, 0, length);
        return new Frame().wrap(buffer, 0, length);
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
