package io.queueenterprise.queue;

/**
 * An appender, tailer or queue was used in a state that does not allow it: after it was closed, or from
 * another thread than the one that owns it. A programming error, not damage to the queue.
 */
public final class QueueStateException extends QueueException {
    private static final long serialVersionUID = 1L;

    public QueueStateException(String queueName, String message, Throwable cause) {
        super(queueName, message, cause);
    }
}
