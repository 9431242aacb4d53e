package io.queueenterprise.replication.wire;

/**
 * Writes the bodies {@link HandshakeBody} reads (CHALLENGE, CHALLENGE_RESPONSE, PROOF) into a frame begun with
 * {@link FrameEncoder#begin} of that type. Fixed lengths; another length is refused (the decoder would refuse the frame).
 */
public final class HandshakeEncoder {
    public FrameEncoder challenge(FrameEncoder out, byte[] initiatorNonce, byte[] initiatorEphemeral, byte[] signature) {
        put(out, initiatorNonce, HandshakeBody.NONCE_LENGTH, "initiatorNonce");
        put(out, initiatorEphemeral, HandshakeBody.EPHEMERAL_LENGTH, "initiatorEphemeral");
        return put(out, signature, HandshakeBody.SIGNATURE_LENGTH, "signature");
    }

    public FrameEncoder challengeResponse(FrameEncoder out, byte[] initiatorNonce, byte[] responderNonce,
                                          byte[] responderEphemeral, byte[] signature) {
        put(out, initiatorNonce, HandshakeBody.NONCE_LENGTH, "initiatorNonce");
        put(out, responderNonce, HandshakeBody.NONCE_LENGTH, "responderNonce");
        put(out, responderEphemeral, HandshakeBody.EPHEMERAL_LENGTH, "responderEphemeral");
        return put(out, signature, HandshakeBody.SIGNATURE_LENGTH, "signature");
    }

    public FrameEncoder proof(FrameEncoder out, byte[] signature) {
        return put(out, signature, HandshakeBody.SIGNATURE_LENGTH, "signature");
    }

    private static FrameEncoder put(FrameEncoder out, byte[] value, int length, String field) {
        if (value.length != length) {
            throw new IllegalArgumentException(field + " must be " + length + " bytes, not " + value.length);
        }
        return out.bytes(value, 0, length);
    }
}
