package io.queueenterprise.replication.wire;

import org.agrona.DirectBuffer;

/**
 * Body of the three handshake frames (frame version 3), fixed lengths:
 * <pre>
 * CHALLENGE          initiator nonce (32), initiator ephemeral X25519 key (32), initiator's signature (64)
 * CHALLENGE_RESPONSE initiator nonce (32, echoed), responder nonce (32), responder ephemeral key (32), responder's signature (64)
 * PROOF              initiator's signature (64)
 * </pre>
 * Signatures are Ed25519 under the sender's identity key (what each signs: {@code SessionCrypto}).
 */
public final class HandshakeBody {
    public static final int NONCE_LENGTH = 32;
    public static final int EPHEMERAL_LENGTH = 32;
    public static final int SIGNATURE_LENGTH = 64;

    private DirectBuffer buffer;
    private int body;
    private FrameType type;

    public HandshakeBody wrap(Frame frame) throws MalformedFrameException {
        int expected = switch (frame.type()) {
            case CHALLENGE -> NONCE_LENGTH + EPHEMERAL_LENGTH + SIGNATURE_LENGTH;
            case CHALLENGE_RESPONSE -> 2 * NONCE_LENGTH + EPHEMERAL_LENGTH + SIGNATURE_LENGTH;
            case PROOF -> SIGNATURE_LENGTH;
            default -> throw new MalformedFrameException("type", frame.type() + " is not a handshake frame");
        };
        if (frame.bodyLength() != expected) {
            throw new MalformedFrameException("body", frame.type() + " body must be " + expected + " bytes, is " + frame.bodyLength());
        }
        this.buffer = frame.buffer();
        this.body = frame.bodyOffset();
        this.type = frame.type();
        return this;
    }

    /** The initiator's nonce (CHALLENGE, CHALLENGE_RESPONSE). */
    public void initiatorNonce(byte[] dst) {
        if (type == FrameType.PROOF) {
            throw new IllegalStateException("a PROOF carries no nonce");
        }
        buffer.getBytes(body, dst, 0, NONCE_LENGTH);
    }

    /** The responder's nonce (CHALLENGE_RESPONSE). */
    public void responderNonce(byte[] dst) {
        if (type != FrameType.CHALLENGE_RESPONSE) {
            throw new IllegalStateException("only a CHALLENGE_RESPONSE carries the responder's nonce");
        }
        buffer.getBytes(body + NONCE_LENGTH, dst, 0, NONCE_LENGTH);
    }

    /** The sender's ephemeral X25519 public key: the initiator's (CHALLENGE) or the responder's (CHALLENGE_RESPONSE). */
    public void ephemeral(byte[] dst) {
        if (type == FrameType.PROOF) {
            throw new IllegalStateException("a PROOF carries no ephemeral key");
        }
        buffer.getBytes(body + (type == FrameType.CHALLENGE ? NONCE_LENGTH : 2 * NONCE_LENGTH), dst, 0, EPHEMERAL_LENGTH);
    }

    /** The sender's signature. */
    public void signature(byte[] dst) {
        int at = switch (type) {
            case CHALLENGE -> NONCE_LENGTH + EPHEMERAL_LENGTH;
            case CHALLENGE_RESPONSE -> 2 * NONCE_LENGTH + EPHEMERAL_LENGTH;
            default -> 0;
        };
        buffer.getBytes(body + at, dst, 0, SIGNATURE_LENGTH);
    }
}
