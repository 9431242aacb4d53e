package io.queueenterprise.crypto;

/** The envelope's mode byte. */
public enum CipherMode {
    /** AES-128 in counter mode: confidentiality only, no integrity (tampering is NOT detected). */
    AES_128_CTR(1, 0),
    /**
     * AES-128 in counter mode plus a Poly1305 tag under a one-time key (AES of counter blocks 0 and 1 of the
     * excerpt's nonce) over the ciphertext, the header's fields and, when bound, the excerpt's index: authenticated.
     */
    AES_128_CTR_POLY1305(2, 16);

    private static final CipherMode[] BY_CODE = {null, AES_128_CTR, AES_128_CTR_POLY1305};

    private final int wireCode;
    private final int tagLength;

    CipherMode(int wireCode, int tagLength) {
        this.wireCode = wireCode;
        this.tagLength = tagLength;
    }

    /** The value of the envelope's mode byte. */
    public int wireCode() {
        return wireCode;
    }

    /** Bytes of authentication tag appended after the ciphertext (0 or 16). */
    public int tagLength() {
        return tagLength;
    }

    /** Total envelope bytes added to the plaintext: header plus tag. */
    public int overhead() {
        return Envelope.HEADER_LENGTH + tagLength;
    }

    public boolean authenticated() {
        return tagLength != 0;
    }

    /** The mode for a wire code, or {@code null} when the code names no known mode. Allocation-free. */
    public static CipherMode fromWireCode(int code) {
        return code > 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
