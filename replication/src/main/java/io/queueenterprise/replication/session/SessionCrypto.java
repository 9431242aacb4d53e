package io.queueenterprise.replication.session;

import io.queueenterprise.protocol.FrameTrailerMac;
import io.queueenterprise.replication.wire.Frame;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The keys and MACs of the peer protocol, all from the peer credential with HKDF-SHA256 (RFC 5869) and HMAC-SHA256:
 * <ul>
 *   <li>handshake key = HKDF(credential, info "queue-enterprise/replication/v1/handshake"): MACs the three handshake
 *       frames, so frames from anyone without the credential are dropped before any work;</li>
 *   <li>proofs = HMAC(credential-derived proof key, role || session id || initiator || responder || term || both
 *       nonces): each side proves the credential over the other's fresh nonce (no replay of an old handshake);</li>
 *   <li>session keys, one per direction = HKDF(credential, salt = initiator nonce || responder nonce, info =
 *       ".../v2/session" || direction label || session id || initiator || responder): MAC every later frame of that
 *       session (HMAC-SHA256, first 16 bytes), each side signing with its own direction's key and verifying with the
 *       other's. Both fresh nonces make every session's keys new (a frame of an older session fails its MAC); the
 *       direction label makes a frame sent back to its sender (reflected) fail its MAC too; both node ids and the
 *       session id tie the keys to this pair and this session.</li>
 * </ul>
 */
public final class SessionCrypto {
    private static final String ALGORITHM = "HmacSHA256";
    private static final byte[] INFO_HANDSHAKE = "queue-enterprise/replication/v1/handshake".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] INFO_PROOF = "queue-enterprise/replication/v1/proof".getBytes(StandardCharsets.US_ASCII);
    /** v2: per-direction keys (v1 had one key for both directions); frames carry {@code Frame.VERSION} 2 since. */
    private static final byte[] INFO_SESSION = "queue-enterprise/replication/v2/session".getBytes(StandardCharsets.US_ASCII);
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
     * The MAC of one direction of a session: HKDF(credential, salt = both nonces, info = ".../v2/session" || direction
     * label || session id || initiator || responder).
     */
    public static FrameMac sessionMac(PeerCredential credential, Direction direction, long sessionId, int initiator,
                                      int responder, byte[] initiatorNonce, byte[] responderNonce) {
        return new FrameMac(sessionKey(credential, direction, sessionId, initiator, responder, initiatorNonce, responderNonce));
    }

    static byte[] sessionKey(PeerCredential credential, Direction direction, long sessionId, int initiator, int responder,
                             byte[] initiatorNonce, byte[] responderNonce) {
        byte[] salt = concat(initiatorNonce, responderNonce);
        byte[] info = ByteBuffer.allocate(INFO_SESSION.length + 1 + direction.label.length + 12).order(ByteOrder.LITTLE_ENDIAN)
                .put(INFO_SESSION).put((byte) direction.label.length).put(direction.label)
                .putLong(sessionId).putShort((short) initiator).putShort((short) responder).array();
        return hkdf(credential.secret(), salt, info, 32);
    }

    /** The proof a side gives ("initiator" or "responder") over both nonces and the session's identity. */
    public static byte[] proof(PeerCredential credential, String role, long sessionId, int initiator, int responder,
                               long term, byte[] initiatorNonce, byte[] responderNonce) {
        byte[] proofKey = hkdf(credential.secret(), new byte[32], INFO_PROOF, 32);
        byte[] r = role.getBytes(StandardCharsets.US_ASCII);
        ByteBuffer input = ByteBuffer.allocate(1 + r.length + 8 + 4 + 8 + initiatorNonce.length + responderNonce.length)
                .order(ByteOrder.LITTLE_ENDIAN);
        input.put((byte) r.length).put(r).putLong(sessionId).putShort((short) initiator).putShort((short) responder)
                .putLong(term).put(initiatorNonce).put(responderNonce);
        return hmac(proofKey, input.array());
    }

    public static boolean proofEquals(byte[] a, byte[] b) {
        return MessageDigest.isEqual(a, b);
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
