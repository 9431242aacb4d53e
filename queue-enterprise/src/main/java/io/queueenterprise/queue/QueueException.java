package io.queueenterprise.queue;

/** Base of every error the library raises about a queue; always names the queue. */
public class QueueException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String queueName;

    public QueueException(String queueName, String message) {
        super("queue '" + queueName + "': " + message);
        this.queueName = queueName;
    }

    public QueueException(String queueName, String message, Throwable cause) {
        super("queue '" + queueName + "': " + message, cause);
        this.queueName = queueName;
    }

    public String queueName() {
        return queueName;
    }
}
