package io.queueenterprise.crypto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Envelope format v1: the bytes stored as one excerpt. All multi-byte header fields are little-endian.
 *
 * <pre>
 * offset 0  u8   format version = 1
 * offset 1  u8   mode (see {@link CipherMode#wireCode()})
 * offset 2  u16  key id (0..65535)
 * offset 4  i32  salt: 32 random bits drawn per write
 * offset 8  ...  ciphertext (same length as the plaintext)
 * tail      16   Poly1305 tag (authenticated mode only)
 * </pre>
 *
 * The excerpt index is not stored: the caller passes it to seal and open.
 */
public final class Envelope {
    public static final int VERSION = 1;
    public static final int VERSION_OFFSET = 0;
    public static final int MODE_OFFSET = 1;
    public static final int KEY_ID_OFFSET = 2;
    public static final int SALT_OFFSET = 4;
    public static final int HEADER_LENGTH = 8;
    /** Where the ciphertext (and, after open, the plaintext) starts, relative to the envelope. */
    public static final int PAYLOAD_OFFSET = HEADER_LENGTH;
    public static final int TAG_LENGTH = 16;
    public static final int MAX_KEY_ID = 0xFFFF;
    /**
     * The cryptographic limit of one envelope's plaintext: (2^32 - 2) AES blocks, because the 32-bit
     * block counter starts at 1 (block 0 is the Poly1305 pad). An {@code int} length can never reach it.
     */
    public static final long MAX_CRYPTO_PLAINTEXT_LENGTH = ((1L << 32) - 2) * 16;
    /** The largest plaintext accepted: the envelope length must still fit an {@code int}. */
    public static final int MAX_PLAINTEXT_LENGTH = Integer.MAX_VALUE - HEADER_LENGTH - TAG_LENGTH;

    private static final VarHandle U16 = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I32 = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private Envelope() {
    }

    /** Envelope length for a plaintext of {@code plaintextLength} bytes in {@code mode}. */
    public static int sealedLength(CipherMode mode, int plaintextLength) {
        checkPlaintextLength(plaintextLength);
        return plaintextLength + mode.overhead();
    }

    /** Bytes of header plus tag for {@code mode}. */
    public static int overhead(CipherMode mode) {
        return mode.overhead();
    }

    /**
     * Plaintext length of the envelope at {@code bytes[off .. off+envelopeLength)}, from its mode byte.
     *
     * @throws EnvelopeException TRUNCATED, UNSUPPORTED_VERSION or UNKNOWN_MODE (index unknown here)
     */
    public static int plaintextLength(byte[] bytes, int off, int envelopeLength) {
        java.util.Objects.checkFromIndexSize(off, envelopeLength, bytes.length);
        CipherMode mode = checkHeader(bytes, off, envelopeLength, EnvelopeException.UNKNOWN_INDEX);
        if (envelopeLength < mode.overhead()) {
            throw new EnvelopeException(EnvelopeException.Reason.TRUNCATED, EnvelopeException.UNKNOWN_INDEX,
                    keyId(bytes, off));
        }
        return envelopeLength - mode.overhead();
    }

    /** Validates length, version and mode; returns the mode. */
    static CipherMode checkHeader(byte[] bytes, int off, int envelopeLength, long index) {
        if (envelopeLength < HEADER_LENGTH) {
            throw new EnvelopeException(EnvelopeException.Reason.TRUNCATED, index, EnvelopeException.UNKNOWN_KEY_ID);
        }
        if (version(bytes, off) != VERSION) {
            throw new EnvelopeException(EnvelopeException.Reason.UNSUPPORTED_VERSION, index,
                    EnvelopeException.UNKNOWN_KEY_ID);
        }
        CipherMode mode = CipherMode.fromWireCode(bytes[off + MODE_OFFSET] & 0xFF);
        if (mode == null) {
            throw new EnvelopeException(EnvelopeException.Reason.UNKNOWN_MODE, index, keyId(bytes, off));
        }
        return mode;
    }

    public static int version(byte[] bytes, int off) {
        return bytes[off + VERSION_OFFSET] & 0xFF;
    }

    /** The raw mode byte (0..255); see {@link CipherMode#fromWireCode(int)}. */
    public static int modeCode(byte[] bytes, int off) {
        return bytes[off + MODE_OFFSET] & 0xFF;
    }

    public static int keyId(byte[] bytes, int off) {
        return (short) U16.get(bytes, off + KEY_ID_OFFSET) & 0xFFFF;
    }

    public static int salt(byte[] bytes, int off) {
        return (int) I32.get(bytes, off + SALT_OFFSET);
    }

    static void writeHeader(byte[] bytes, int off, CipherMode mode, int keyId, int salt) {
        bytes[off + VERSION_OFFSET] = (byte) VERSION;
        bytes[off + MODE_OFFSET] = (byte) mode.wireCode();
        U16.set(bytes, off + KEY_ID_OFFSET, (short) keyId);
        I32.set(bytes, off + SALT_OFFSET, salt);
    }

    static void checkPlaintextLength(int plaintextLength) {
        if (plaintextLength < 0 || plaintextLength > MAX_PLAINTEXT_LENGTH) {
            throw new IllegalArgumentException("plaintext length " + plaintextLength + " outside 0.." + MAX_PLAINTEXT_LENGTH);
        }
    }

    static void checkKeyId(int keyId) {
        if (keyId < 0 || keyId > MAX_KEY_ID) {
            throw new IllegalArgumentException("key id " + keyId + " outside 0.." + MAX_KEY_ID);
        }
    }
}
