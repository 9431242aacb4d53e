package io.queueenterprise.queue;

/**
 * The queue cannot be opened as asked: an encrypted queue opened without keys, a plain queue opened
 * as encrypted, a key that does not match the one the queue was written with, a different cipher
 * mode. Nothing was written.
 */
public final class QueueConfigurationException extends QueueException {
    private static final long serialVersionUID = 1L;

    /** What is wrong, for callers that branch on it. */
    public enum Problem {
        ENCRYPTED_QUEUE_WITHOUT_KEYS,
        PLAIN_QUEUE_OPENED_AS_ENCRYPTED,
        WRONG_KEY,
        CIPHER_MODE_MISMATCH,
        NAME_MISMATCH,
        UNREADABLE_DESCRIPTOR,
        MISSING_JVM_FLAG
    }

    private final Problem problem;

    public QueueConfigurationException(String queueName, Problem problem, String message) {
        this(queueName, problem, message, null);
    }

    public QueueConfigurationException(String queueName, Problem problem, String message, Throwable cause) {
        super(queueName, problem + ": " + message, cause);
        this.problem = problem;
    }

    public Problem problem() {
        return problem;
    }
}
