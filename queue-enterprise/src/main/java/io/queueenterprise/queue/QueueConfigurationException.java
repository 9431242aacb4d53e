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
        /**
         * The descriptor's authenticator does not verify: it was edited (a mode changed, say), copied from
         * another queue under another key, or its authenticating key is not in the ring.
         */
        DESCRIPTOR_NOT_AUTHENTIC,
        /** The descriptor names another queue identity than the one recorded with this queue's cycle files. */
        IDENTITY_MISMATCH,
        /** A replica has no appender until it is promoted under a new term. */
        REPLICA_CANNOT_WRITE,
        /**
         * The directory holds an encrypted queue (its identity is pinned beside the cycle files) whose
         * descriptor is gone: restore it from a backup or recover it; nothing is reinitialised.
         */
        DESCRIPTOR_MISSING,
        /** A descriptor recovery was asked for where a descriptor exists: nothing to recover, nothing changed. */
        DESCRIPTOR_PRESENT,
        /** The key directory or a key file is unusable; the cause is the crypto module's {@code KeyFileException}. */
        KEY_FILES,
        /**
         * The application's ack mode does not fit the replication node's for this queue: quorum acks asked for on a
         * queue no node replicates in QUORUM mode, or not asked for on one that is.
         */
        ACK_MODE_MISMATCH,
        /**
         * Chronicle's {@code metadata.cq4t} beside the cycle files is missing (where it cannot be created: a
         * read-only open) or cannot be read: the queue's identity and replication marks live there.
         */
        UNREADABLE_METADATA,
        /** The JVM lacks module access Chronicle Queue needs; the message names the flags (bin/jvm.args). */
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
