package io.queueenterprise.crypto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Envelope format v2: the bytes stored as one excerpt. Multi-byte header fields are little-endian.
 *
 * <pre>
 * offset 0   u8   format version = 2
 * offset 1   u8   mode (low 4 bits, {@link CipherMode#wireCode()}) | flags (high 4 bits: 0x10 = index bound)
 * offset 2   u16  key id (0..65535)
 * offset 4   u32  writer sequence: 0, 1, 2, ... per writer epoch, never repeated within one epoch
 * offset 8   u64  writer epoch: unique per writer session (random, or derived from a leadership term)
 * offset 16  ...  ciphertext (same length as the plaintext)
 * tail       16   Poly1305 tag (authenticated mode only)
 * </pre>
 *
 * The nonce is (writer epoch, writer sequence): it does not depend on the excerpt's index, so a writer that
 * does not know where its excerpt will land (a remote client) can seal. Where the index is known (a local
 * appender, inside Chronicle's write lock), the envelope is flagged "index bound" and the index enters the
 * authenticator, so an excerpt moved, reordered or replayed to another index fails authentication.
 * The index itself is not stored. See docs/crypto.md for the construction and the nonce argument.
 */
public final class Envelope {
    public static final int VERSION = 2;
    public static final int VERSION_OFFSET = 0;
    public static final int MODE_OFFSET = 1;
    public static final int KEY_ID_OFFSET = 2;
    public static final int SEQUENCE_OFFSET = 4;
    public static final int EPOCH_OFFSET = 8;
    public static final int HEADER_LENGTH = 16;
    /** Where the ciphertext (and, after open, the plaintext) starts, relative to the envelope. */
    public static final int PAYLOAD_OFFSET = HEADER_LENGTH;
    public static final int TAG_LENGTH = 16;
    public static final int MAX_KEY_ID = 0xFFFF;
    /** Flag in the mode byte: the excerpt's index is part of the authenticated data. */
    public static final int FLAG_INDEX_BOUND = 0x10;
    private static final int MODE_MASK = 0x0F;
    private static final int KNOWN_FLAGS = FLAG_INDEX_BOUND;
    /**
     * The cryptographic limit of one envelope's plaintext: (2^32 - 2) AES blocks, because the 32-bit block
     * counter starts at 2 (blocks 0 and 1 make the one-time Poly1305 key). An {@code int} length never reaches it.
     */
    public static final long MAX_CRYPTO_PLAINTEXT_LENGTH = ((1L << 32) - 2) * 16;
    /** The largest plaintext accepted: the envelope length must still fit an {@code int}. */
    public static final int MAX_PLAINTEXT_LENGTH = Integer.MAX_VALUE - HEADER_LENGTH - TAG_LENGTH;

    private static final VarHandle U16 = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I32 = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

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
     * @throws EnvelopeException TRUNCATED, UNSUPPORTED_VERSION, UNKNOWN_MODE or MALFORMED (index unknown here)
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

    /** Validates length, version, mode and flags; returns the mode. */
    static CipherMode checkHeader(byte[] bytes, int off, int envelopeLength, long index) {
        if (envelopeLength < HEADER_LENGTH) {
            throw new EnvelopeException(EnvelopeException.Reason.TRUNCATED, index, EnvelopeException.UNKNOWN_KEY_ID);
        }
        return checkHeader(firstWord(bytes, off), envelopeLength, index);
    }

    /**
     * {@link #checkHeader(byte[], int, int, long)} on the header's first 8 bytes as a little-endian word (version,
     * mode and flags, key id, writer sequence), for an envelope read from memory a word at a time.
     */
    static CipherMode checkHeader(long firstWord, int envelopeLength, long index) {
        if (envelopeLength < HEADER_LENGTH) {
            throw new EnvelopeException(EnvelopeException.Reason.TRUNCATED, index, EnvelopeException.UNKNOWN_KEY_ID);
        }
        int version = (int) firstWord & 0xFF;
        if (version != VERSION) {
            throw new EnvelopeException(version == 1 ? EnvelopeException.Reason.VERSION_1_DROPPED
                    : EnvelopeException.Reason.UNSUPPORTED_VERSION, index, EnvelopeException.UNKNOWN_KEY_ID);
        }
        int modeByte = (int) (firstWord >>> 8) & 0xFF;
        CipherMode mode = CipherMode.fromWireCode(modeByte & MODE_MASK);
        if (mode == null) {
            throw new EnvelopeException(EnvelopeException.Reason.UNKNOWN_MODE, index, keyId(firstWord));
        }
        int flags = modeByte & ~MODE_MASK;
        if ((flags & ~KNOWN_FLAGS) != 0 || (!mode.authenticated() && flags != 0)) {
            // Unknown flags, or an index binding claimed where nothing is authenticated.
            throw new EnvelopeException(EnvelopeException.Reason.MALFORMED, index, keyId(firstWord));
        }
        return mode;
    }

    /** The header's first 8 bytes as a little-endian word. */
    static long firstWord(byte[] bytes, int off) {
        return (long) I64.get(bytes, off);
    }

    /**
     * The header's first 8 bytes as a little-endian word: version, mode byte (with the index-bound flag), key id,
     * writer sequence. The second word is the writer epoch.
     */
    static long firstWord(CipherMode mode, boolean indexBound, int keyId, int sequence) {
        return VERSION | (long) (mode.wireCode() | (indexBound ? FLAG_INDEX_BOUND : 0)) << 8
                | (long) (keyId & 0xFFFF) << 16 | Integer.toUnsignedLong(sequence) << 32;
    }

    static int keyId(long firstWord) {
        return (int) (firstWord >>> 16) & 0xFFFF;
    }

    static int sequence(long firstWord) {
        return (int) (firstWord >>> 32);
    }

    static boolean indexBound(long firstWord) {
        return (firstWord & (long) FLAG_INDEX_BOUND << 8) != 0;
    }

    public static int version(byte[] bytes, int off) {
        return bytes[off + VERSION_OFFSET] & 0xFF;
    }

    /** The raw mode byte (0..255): mode code in the low 4 bits, flags in the high 4 bits. */
    public static int modeByte(byte[] bytes, int off) {
        return bytes[off + MODE_OFFSET] & 0xFF;
    }

    /** Whether the envelope claims that its index is authenticated (checked by the tag, not by this call). */
    public static boolean indexBound(byte[] bytes, int off) {
        return (bytes[off + MODE_OFFSET] & FLAG_INDEX_BOUND) != 0;
    }

    public static int keyId(byte[] bytes, int off) {
        return (short) U16.get(bytes, off + KEY_ID_OFFSET) & 0xFFFF;
    }

    /** The writer sequence as an unsigned 32-bit value in an int (compare with {@link Integer#compareUnsigned}). */
    public static int sequence(byte[] bytes, int off) {
        return (int) I32.get(bytes, off + SEQUENCE_OFFSET);
    }

    public static long epoch(byte[] bytes, int off) {
        return (long) I64.get(bytes, off + EPOCH_OFFSET);
    }

    /**
     * The tag's last 8 bytes (little-endian): the ciphertext length in the low 32 bits, the header's first 4 bytes
     * (version, mode and flags, key id) in the high 32. With the writer epoch and sequence, which select the
     * one-time Poly1305 key, this binds every header field without absorbing the header as a block of its own
     * (ChaCha20-Poly1305 binds its nonce the same way): one Poly1305 block fewer per seal and per open.
     */
    static long lengthWord(byte[] bytes, int off, int ciphertextLength) {
        return Integer.toUnsignedLong(ciphertextLength) | ((long) (int) I32.get(bytes, off + VERSION_OFFSET) << 32);
    }

    /** {@link #lengthWord(byte[], int, int)} from the header's first word. */
    static long lengthWord(long firstWord, int ciphertextLength) {
        return Integer.toUnsignedLong(ciphertextLength) | (firstWord << 32);
    }

    static void writeHeader(byte[] bytes, int off, CipherMode mode, boolean indexBound, int keyId, long epoch,
                            int sequence) {
        bytes[off + VERSION_OFFSET] = (byte) VERSION;
        bytes[off + MODE_OFFSET] = (byte) (mode.wireCode() | (indexBound ? FLAG_INDEX_BOUND : 0));
        U16.set(bytes, off + KEY_ID_OFFSET, (short) keyId);
        I32.set(bytes, off + SEQUENCE_OFFSET, sequence);
        I64.set(bytes, off + EPOCH_OFFSET, epoch);
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
