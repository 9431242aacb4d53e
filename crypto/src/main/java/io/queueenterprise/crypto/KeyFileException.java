package io.queueenterprise.crypto;

import java.nio.file.Path;

/**
 * A key directory or key file is unusable. Names the path and the reason; never the file's content.
 */
public final class KeyFileException extends QueueCryptoException {
    private static final long serialVersionUID = 1L;

    public enum Reason {
        DIRECTORY_MISSING,
        NO_KEYS,
        KEY_FILE_EMPTY,
        /** Not 32 or 64 characters before the optional line end (or a file over 4 KiB). */
        WRONG_LENGTH,
        /** The right length, but not all hex digits: raw bytes, base64 and passphrases are not key files. */
        NOT_HEX,
        UNREADABLE,
        BAD_FILE_NAME,
        ID_OUT_OF_RANGE,
        DUPLICATE_KEY_ID,
        ACTIVE_MISSING,
        ACTIVE_NOT_A_NUMBER,
        ACTIVE_KEY_ABSENT,
        /** A key file readable by group/others or a key folder writable by others, refused by policy. */
        INSECURE_PERMISSIONS
    }

    private final transient Path path;
    private final Reason reason;

    public KeyFileException(Path path, Reason reason, String detail) {
        super(path + ": " + reason + " (" + detail + ")");
        this.path = path;
        this.reason = reason;
    }

    public Path path() {
        return path;
    }

    public Reason reason() {
        return reason;
    }
}
