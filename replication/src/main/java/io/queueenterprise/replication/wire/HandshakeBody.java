package io.queueenterprise.replication.wire;

import org.agrona.DirectBuffer;

/**
 * Body of CHALLENGE (initiator's nonce), CHALLENGE_RESPONSE (initiator's nonce echoed, responder's nonce, responder's
 * proof) and PROOF (initiator's proof). Fixed lengths.
 */
public final class HandshakeBody {
    public static final int NONCE_LENGTH = 32;
    public static final int PROOF_LENGTH = 32;

    private DirectBuffer buffer;
    private int body;
    private FrameType type;

    public HandshakeBody wrap(Frame frame) throws MalformedFrameException {
        int expected = switch (frame.type()) {
            case CHALLENGE -> NONCE_LENGTH;
            case CHALLENGE_RESPONSE -> 2 * NONCE_LENGTH + PROOF_LENGTH;
            case PROOF -> PROOF_LENGTH;
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

    /** The proof: responder's (CHALLENGE_RESPONSE) or initiator's (PROOF). */
    public void proof(byte[] dst) {
        if (type == FrameType.CHALLENGE) {
            throw new IllegalStateException("a CHALLENGE carries no proof");
        }
        buffer.getBytes(type == FrameType.PROOF ? body : body + 2 * NONCE_LENGTH, dst, 0, PROOF_LENGTH);
    }
}
