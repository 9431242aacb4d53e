package io.queueenterprise.queue;

/** The queue's files could not be read as a Chronicle Queue (a damaged cycle file, say). */
public final class CorruptedQueueException extends ExcerptException {
    private static final long serialVersionUID = 1L;

    public CorruptedQueueException(String queueName, long index, String message, Throwable cause) {
        super(queueName, index, message, cause);
    }
}
