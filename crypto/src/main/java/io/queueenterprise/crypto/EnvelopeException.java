package io.queueenterprise.crypto;

/**
 * An envelope could not be opened. The message names the excerpt index, the key id and the reason;
 * it never contains key or plaintext bytes.
 *
 * <p>In {@link CipherMode#AES_128_CTR} tampering is NOT detected: a modified ciphertext opens to modified
 * plaintext without any exception. Only the authenticated mode raises {@link Reason#AUTHENTICATION_FAILED}.
 */
public final class EnvelopeException extends QueueCryptoException {
    private static final long serialVersionUID = 1L;
    /** Index value when the caller gave none (e.g. {@link Envelope#plaintextLength}). */
    public static final long UNKNOWN_INDEX = -1L;
    /** Key id value when the envelope was too short (or its version unknown) to read one. */
    public static final int UNKNOWN_KEY_ID = -1;

    public enum Reason {
        /** Shorter than the header, or than header plus tag. */
        TRUNCATED,
        /** Format version byte names no format this library reads. */
        UNSUPPORTED_VERSION,
        /** Format version 1 (before the v2 redesign): no longer read; nothing of it was ever deployed. */
        VERSION_1_DROPPED,
        /** Unknown flag bits, or an index binding claimed in a mode that authenticates nothing. */
        MALFORMED,
        /** Mode byte names no known mode. */
        UNKNOWN_MODE,
        /**
         * Mode byte is a known mode but not the one this queue uses (e.g. an authenticated envelope rewritten
         * as CTR with its tag stripped: a downgrade, refused).
         */
        MODE_MISMATCH,
        /** The key ring holds no key with the envelope's key id. */
        UNKNOWN_KEY_ID,
        /** Tag mismatch: the envelope was tampered with, moved to another index, or the key is wrong. */
        AUTHENTICATION_FAILED,
        /**
         * An authentic envelope not bound to its index whose writer sequence is not above the last one this
         * reader took from the same writer epoch: replayed or reordered.
         */
        REPLAYED_OR_REORDERED
    }

    private final Reason reason;
    private final long index;
    private final int keyId;

    public EnvelopeException(Reason reason, long index, int keyId) {
        super(message(reason, index, keyId));
        this.reason = reason;
        this.index = index;
        this.keyId = keyId;
    }

    private static String message(Reason reason, long index, int keyId) {
        String where = index == UNKNOWN_INDEX ? "excerpt (index not given)" : "excerpt index " + index
                + " (0x" + Long.toHexString(index) + ")";
        String key = keyId == UNKNOWN_KEY_ID ? "key id unknown" : "key id " + keyId;
        return "cannot open " + where + ", " + key + ": " + reason + describe(reason);
    }

    private static String describe(Reason reason) {
        switch (reason) {
            case TRUNCATED: return " (envelope shorter than its header/tag)";
            case UNSUPPORTED_VERSION: return " (envelope format version is not " + Envelope.VERSION + ")";
            case VERSION_1_DROPPED: return " (envelope format 1 is no longer read; see docs/crypto.md)";
            case MALFORMED: return " (unknown flag bits in the mode byte)";
            case UNKNOWN_MODE: return " (mode byte names no known cipher mode)";
            case MODE_MISMATCH: return " (envelope mode differs from the queue's configured mode)";
            case UNKNOWN_KEY_ID: return " (no such key in the key ring)";
            case AUTHENTICATION_FAILED: return " (tampered, moved to another index, or wrong key)";
            case REPLAYED_OR_REORDERED: return " (writer sequence not above the last one read from this writer)";
            default: return "";
        }
    }

    /** The reason in words with the key id, without the index: for callers that name the excerpt themselves. */
    public String description() {
        return reason + describe(reason) + (keyId == UNKNOWN_KEY_ID ? "" : ", key id " + keyId);
    }

    public Reason reason() {
        return reason;
    }

    /** The excerpt index passed to open, or {@link #UNKNOWN_INDEX}. */
    public long index() {
        return index;
    }

    /** The envelope's key id, or {@link #UNKNOWN_KEY_ID}. */
    public int keyId() {
        return keyId;
    }
}
