package io.queueenterprise.replication.session;

import io.queueenterprise.crypto.EphemeralKey;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameEncoder;
import io.queueenterprise.replication.wire.FrameType;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a session key binds: a frame MACed in one direction of one session verifies there and nowhere else: not in
 * the other direction (a frame reflected to its sender), not under another nonce of either side (an older or a
 * later session), another session id or another pair of nodes.
 */
@Tag("unit")
class SessionKeysTest {
    private static final long SESSION = 0x1234_5678_9abcL;
    private static final int FOLLOWER = 1;
    private static final int LEADER = 0;

    private final PeerCredential credential = PeerCredential.of(filled(32, 3));
    private final byte[] initiatorNonce = filled(32, 1);
    private final byte[] responderNonce = filled(32, 2);
    private final byte[] shared = filled(32, 4);
    private final byte[] ephemeralI = filled(32, 5);
    private final byte[] ephemeralR = filled(32, 6);

    @Test
    void aFrameVerifiesOnlyUnderTheKeyOfItsOwnDirectionSessionNoncesAndNodes() throws Exception {
        Frame heartbeat = frame(mac(SessionCrypto.Direction.INITIATOR_TO_RESPONDER, SESSION, FOLLOWER, LEADER,
                initiatorNonce, responderNonce));

        assertTrue(mac(SessionCrypto.Direction.INITIATOR_TO_RESPONDER, SESSION, FOLLOWER, LEADER, initiatorNonce,
                responderNonce).verify(heartbeat), "its own key");
        assertFalse(mac(SessionCrypto.Direction.RESPONDER_TO_INITIATOR, SESSION, FOLLOWER, LEADER, initiatorNonce,
                responderNonce).verify(heartbeat), "reflected: the other direction's key");
        assertFalse(mac(SessionCrypto.Direction.INITIATOR_TO_RESPONDER, SESSION, FOLLOWER, LEADER, filled(32, 9),
                responderNonce).verify(heartbeat), "another initiator nonce");
        assertFalse(mac(SessionCrypto.Direction.INITIATOR_TO_RESPONDER, SESSION, FOLLOWER, LEADER, initiatorNonce,
                filled(32, 9)).verify(heartbeat), "another responder nonce");
        assertFalse(mac(SessionCrypto.Direction.INITIATOR_TO_RESPONDER, SESSION, FOLLOWER, LEADER, responderNonce,
                initiatorNonce).verify(heartbeat), "the nonces swapped");
        assertFalse(mac(SessionCrypto.Direction.INITIATOR_TO_RESPONDER, SESSION + 1, FOLLOWER, LEADER, initiatorNonce,
                responderNonce).verify(heartbeat), "another session id");
        assertFalse(mac(SessionCrypto.Direction.INITIATOR_TO_RESPONDER, SESSION, LEADER, FOLLOWER, initiatorNonce,
                responderNonce).verify(heartbeat), "the node ids swapped");
        assertFalse(mac(SessionCrypto.Direction.INITIATOR_TO_RESPONDER, SESSION, 2, LEADER, initiatorNonce,
                responderNonce).verify(heartbeat), "another initiator");
        assertFalse(SessionCrypto.sessionMac(credential, filled(32, 9), SessionCrypto.Direction.INITIATOR_TO_RESPONDER, SESSION,
                FOLLOWER, LEADER, initiatorNonce, responderNonce, ephemeralI, ephemeralR).verify(heartbeat),
                "another X25519 secret: the credential and every value on the wire are not enough");
        assertFalse(SessionCrypto.sessionMac(credential, shared, SessionCrypto.Direction.INITIATOR_TO_RESPONDER, SESSION,
                FOLLOWER, LEADER, initiatorNonce, responderNonce, ephemeralR, ephemeralI).verify(heartbeat),
                "the ephemeral keys swapped");
    }

    @Test
    void twoNodesAgreeOnTheX25519SecretAndAThirdCannot() {
        java.security.SecureRandom random = new java.security.SecureRandom();
        EphemeralKey initiator = EphemeralKey.generate(random);
        EphemeralKey responder = EphemeralKey.generate(random);
        EphemeralKey insider = EphemeralKey.generate(random);
        assertTrue(Arrays.equals(initiator.agree(responder.publicKey()), responder.agree(initiator.publicKey())));
        assertFalse(Arrays.equals(initiator.agree(responder.publicKey()), insider.agree(responder.publicKey())));
        assertTrue(initiator.agree(new byte[32]) == null, "the all-zero point (a degenerate secret) is refused");
    }

    @Test
    void theTwoDirectionsOfASessionHaveDifferentKeys() {
        byte[] toResponder = SessionCrypto.sessionKey(credential, shared, SessionCrypto.Direction.INITIATOR_TO_RESPONDER, SESSION,
                FOLLOWER, LEADER, initiatorNonce, responderNonce, ephemeralI, ephemeralR);
        byte[] toInitiator = SessionCrypto.sessionKey(credential, shared, SessionCrypto.Direction.RESPONDER_TO_INITIATOR, SESSION,
                FOLLOWER, LEADER, initiatorNonce, responderNonce, ephemeralI, ephemeralR);
        assertFalse(Arrays.equals(toResponder, toInitiator));
    }

    private SessionCrypto.FrameMac mac(SessionCrypto.Direction direction, long session, int initiator, int responder,
                                       byte[] nonceI, byte[] nonceR) {
        return SessionCrypto.sessionMac(credential, shared, direction, session, initiator, responder, nonceI, nonceR,
                ephemeralI, ephemeralR);
    }

    private static Frame frame(SessionCrypto.FrameMac mac) throws Exception {
        ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(128);
        int length = new FrameEncoder().begin(buffer, 0, FrameType.HEARTBEAT, FOLLOWER, 1, SESSION, 1).i64(0).u16(0).finish();
        mac.sign(buffer, 0, length);
        return new Frame().wrap(buffer, 0, length);
    }

    private static byte[] filled(int length, int value) {
        byte[] b = new byte[length];
        Arrays.fill(b, (byte) value);
        return b;
    }
}
