package io.queueenterprise.queue;

/**
 * An excerpt larger than the queue can hold in one piece: Chronicle's limit is the queue's overlap size
 * (a quarter of the block size, 16 MiB with the default 64 MiB blocks), and an encrypted excerpt also
 * carries the envelope's overhead. Nothing was written; raise {@code blockSize} for larger excerpts.
 */
public final class ExcerptTooLargeException extends ExcerptException {
    private static final long serialVersionUID = 1L;
    private final long length;
    private final long maximum;

    public ExcerptTooLargeException(String queueName, long length, long maximum, Throwable cause) {
        super(queueName, UNKNOWN_INDEX, (length < 0 ? "the excerpt" : "an excerpt of " + length + " bytes")
                + " is larger than the " + maximum + " bytes this queue takes in one excerpt; nothing was written"
                + " (a larger blockSize raises the limit: it is a quarter of the block size)", cause);
        this.length = length;
        this.maximum = maximum;
    }

    /** The excerpt's length as the caller gave it (the plaintext for an encrypted queue), or -1 if unknown. */
    public long length() {
        return length;
    }

    /** The largest excerpt this queue takes, as the caller counts it (plaintext for an encrypted queue). */
    public long maximum() {
        return maximum;
    }
}
