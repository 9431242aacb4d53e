package io.queueenterprise.queue;

/**
 * An appender, tailer or queue was used in a state that does not allow it: after it (or its queue) was closed, from
 * another thread than the one that owns it, or for writing on a queue opened read-only. A programming error, not
 * damage to the queue; the message says which state, the cause is Chronicle's exception where it found it.
 */
public final class QueueStateException extends QueueException {
    private static final long serialVersionUID = 1L;

    public QueueStateException(String queueName, String message, Throwable cause) {
        super(queueName, message, cause);
    }
}
