package io.queueenterprise.replication.session;

import io.queueenterprise.protocol.FrameTrailerMac;
import io.queueenterprise.replication.wire.Frame;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The keys, signatures and MACs of the peer protocol (frame version 3). Two factors: the cluster's peer credential
 * (shared by the replicas) and each node's own identity key (Ed25519, {@link PeerIdentities}); and a fresh X25519
 * key pair per handshake side.
 * <ul>
 *   <li>handshake key = HKDF(credential, info "queue-enterprise/replication/v1/handshake"): MACs the three handshake
 *       frames, so frames from anyone without the credential are dropped before any signature is checked (an
 *       Ed25519 verification costs tens of microseconds; a MAC, one);</li>
 *   <li>signatures: the initiator signs its CHALLENGE (session id, both node ids, term, its nonce, its ephemeral
 *       key), the responder signs the transcript (both nonces, both node ids, session id, term, both ephemeral keys)
 *       in its CHALLENGE_RESPONSE and the initiator the same transcript in its PROOF, each with its own identity key,
 *       each checked under the public key configured for the node id the frame claims; a role label in each signed
 *       message keeps one side's signature from standing for the other's;</li>
 *   <li>session keys, one per direction = HKDF(ikm = credential || X25519(ephemeral keys), salt = initiator nonce ||
 *       responder nonce, info = ".../v3/session" || direction label || session id || initiator || responder || both
 *       ephemeral keys): MAC every later frame of that session (HMAC-SHA256, first 16 bytes). The X25519 secret is
 *       known to the two ends alone: a node holding the credential, or even another node's identity key, reads every
 *       other input off the wire and still cannot derive a pair's keys it is not part of; the signed ephemeral keys
 *       keep anyone from putting themselves in the middle. Both nonces make every session's keys new, the direction
 *       label makes a reflected frame fail its MAC.</li>
 * </ul>
 */
public final class SessionCrypto {
    private static final String ALGORITHM = "HmacSHA256";
    private static final byte[] INFO_HANDSHAKE = "queue-enterprise/replication/v1/handshake".getBytes(StandardCharsets.US_ASCII);
    /**
     * v3: an X25519 secret mixed in and both ephemeral keys bound (v2: per-direction keys from the credential alone; v1:
     * one key for both directions); frames carry {@code Frame.VERSION} 3 since.
     */
    private static final byte[] INFO_SESSION = "queue-enterprise/replication/v3/session".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SIGNED_CHALLENGE = "queue-enterprise/replication/v3/challenge".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SIGNED_TRANSCRIPT = "queue-enterprise/replication/v3/transcript".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LABEL_INITIATOR_TO_RESPONDER = "initiator->responder".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LABEL_RESPONDER_TO_INITIATOR = "responder->initiator".getBytes(StandardCharsets.US_ASCII);

    private SessionCrypto() {
    }

    /** A frame MAC under one key: reusable, for one thread, allocation-free ({@link FrameTrailerMac}). */
    public static final class FrameMac {
        private final FrameTrailerMac trailer;

        private FrameMac(byte[] key) {
            trailer = new FrameTrailerMac(key);
        }

        /** Fills the MAC trailer of the frame {@code [offset, offset + length)}. */
        public void sign(MutableDirectBuffer buffer, int offset, int length) {
            trailer.sign(buffer, offset, length);
        }

        /** Whether the frame's trailer is the MAC of the rest, compared in constant time. */
        public boolean verify(Frame frame) {
            return trailer.verify(frame.buffer(), frame.offset(), frame.length());
        }
    }

    public static FrameMac handshakeMac(PeerCredential credential) {
        return new FrameMac(hkdf(credential.secret(), new byte[32], INFO_HANDSHAKE, 32));
    }

    /** Which way a session key MACs: each direction of a session has its own key. */
    public enum Direction {
        /** Frames the initiator (a follower) sends to the responder (its leader). */
        INITIATOR_TO_RESPONDER(LABEL_INITIATOR_TO_RESPONDER),
        /** Frames the responder (a leader) sends to the initiator (its follower). */
        RESPONDER_TO_INITIATOR(LABEL_RESPONDER_TO_INITIATOR);

        private final byte[] label;

        Direction(byte[] label) {
            this.label = label;
        }
    }

    /**
     * The MAC of one direction of a session: HKDF(credential || X25519 secret, salt = both nonces, info = ".../v3/session"
     * || direction label || session id || initiator || responder || initiator's ephemeral key || responder's).
     */
    public static FrameMac sessionMac(PeerCredential credential, byte[] sharedSecret, Direction direction, long sessionId,
                                      int initiator, int responder, byte[] initiatorNonce, byte[] responderNonce,
                                      byte[] initiatorEphemeral, byte[] responderEphemeral) {
        return new FrameMac(sessionKey(credential, sharedSecret, direction, sessionId, initiator, responder, initiatorNonce,
                responderNonce, initiatorEphemeral, responderEphemeral));
    }

    static byte[] sessionKey(PeerCredential credential, byte[] sharedSecret, Direction direction, long sessionId, int initiator,
                             int responder, byte[] initiatorNonce, byte[] responderNonce, byte[] initiatorEphemeral,
                             byte[] responderEphemeral) {
        byte[] salt = concat(initiatorNonce, responderNonce);
        byte[] info = ByteBuffer.allocate(INFO_SESSION.length + 1 + direction.label.length + 12 + initiatorEphemeral.length
                        + responderEphemeral.length).order(ByteOrder.LITTLE_ENDIAN)
                .put(INFO_SESSION).put((byte) direction.label.length).put(direction.label)
                .putLong(sessionId).putShort((short) initiator).putShort((short) responder)
                .put(initiatorEphemeral).put(responderEphemeral).array();
        byte[] ikm = concat(credential.secret(), sharedSecret);
        try {
            return hkdf(ikm, salt, info, 32);
        } finally {
            java.util.Arrays.fill(ikm, (byte) 0);
        }
    }

    /** What the initiator signs in its CHALLENGE: who it is, whom it challenges, and its nonce and ephemeral key. */
    public static byte[] signedChallenge(long sessionId, int initiator, int responder, long term, byte[] initiatorNonce,
                                         byte[] initiatorEphemeral) {
        return ByteBuffer.allocate(SIGNED_CHALLENGE.length + 20 + initiatorNonce.length + initiatorEphemeral.length)
                .order(ByteOrder.LITTLE_ENDIAN).put(SIGNED_CHALLENGE).putLong(sessionId).putShort((short) initiator)
                .putShort((short) responder).putLong(term).put(initiatorNonce).put(initiatorEphemeral).array();
    }

    /**
     * What a side ("initiator" or "responder") signs to finish the handshake: the whole transcript, both nonces and both
     * ephemeral keys. The role keeps the responder's signature from being replayed as the initiator's.
     */
    public static byte[] signedTranscript(String role, long sessionId, int initiator, int responder, long term,
                                          byte[] initiatorNonce, byte[] responderNonce, byte[] initiatorEphemeral,
                                          byte[] responderEphemeral) {
        byte[] r = role.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(SIGNED_TRANSCRIPT.length + 1 + r.length + 20 + initiatorNonce.length + responderNonce.length
                        + initiatorEphemeral.length + responderEphemeral.length).order(ByteOrder.LITTLE_ENDIAN)
                .put(SIGNED_TRANSCRIPT).put((byte) r.length).put(r).putLong(sessionId).putShort((short) initiator)
                .putShort((short) responder).putLong(term).put(initiatorNonce).put(responderNonce)
                .put(initiatorEphemeral).put(responderEphemeral).array();
    }

    static byte[] hkdf(byte[] ikm, byte[] salt, byte[] info, int length) {
        byte[] prk = hmac(salt, ikm);
        byte[] out = new byte[length];
        byte[] t = new byte[0];
        int produced = 0;
        for (int i = 1; produced < length; i++) {
            t = hmac(prk, concat(concat(t, info), new byte[]{(byte) i}));
            int n = Math.min(t.length, length - produced);
            System.arraycopy(t, 0, out, produced, n);
            produced += n;
        }
        return out;
    }

    private static byte[] hmac(byte[] key, byte[] data) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(key, ALGORITHM));
            return mac.doFinal(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
