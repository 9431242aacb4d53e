package io.queueenterprise.queue;

/** An error about one excerpt: names the queue and the excerpt's index (cycle and sequence). */
public class ExcerptException extends QueueException {
    private static final long serialVersionUID = 1L;
    public static final long UNKNOWN_INDEX = Long.MIN_VALUE;
    private final long index;

    public ExcerptException(String queueName, long index, String message, Throwable cause) {
        super(queueName, (index == UNKNOWN_INDEX ? "" : "index 0x" + Long.toHexString(index) + ": ") + message, cause);
        this.index = index;
    }

    /** The excerpt's Chronicle index, or {@link #UNKNOWN_INDEX}. */
    public long index() {
        return index;
    }
}
