package io.queueenterprise.replication.wire;

/**
 * Writes the bodies {@link HandshakeBody} reads (CHALLENGE, CHALLENGE_RESPONSE, PROOF) into a frame begun with
 * {@link FrameEncoder#begin} of that type. Fixed lengths: nonces of {@value HandshakeBody#NONCE_LENGTH} bytes, proofs
 * of {@value HandshakeBody#PROOF_LENGTH}; another length is refused (the decoder would refuse the frame).
 */
public final class HandshakeEncoder {
    public FrameEncoder challenge(FrameEncoder out, byte[] initiatorNonce) {
        return put(out, initiatorNonce, HandshakeBody.NONCE_LENGTH, "initiatorNonce");
    }

    public FrameEncoder challengeResponse(FrameEncoder out, byte[] initiatorNonce, byte[] responderNonce, byte[] proof) {
        put(out, initiatorNonce, HandshakeBody.NONCE_LENGTH, "initiatorNonce");
        put(out, responderNonce, HandshakeBody.NONCE_LENGTH, "responderNonce");
        return put(out, proof, HandshakeBody.PROOF_LENGTH, "proof");
    }

    public FrameEncoder proof(FrameEncoder out, byte[] proof) {
        return put(out, proof, HandshakeBody.PROOF_LENGTH, "proof");
    }

    private static FrameEncoder put(FrameEncoder out, byte[] value, int length, String field) {
        if (value.length != length) {
            throw new IllegalArgumentException(field + " must be " + length + " bytes, not " + value.length);
        }
        return out.bytes(value, 0, length);
    }
}
