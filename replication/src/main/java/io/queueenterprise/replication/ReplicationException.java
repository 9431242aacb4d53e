package io.queueenterprise.replication;

/** Base of the replication module's typed errors. */
public class ReplicationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ReplicationException(String message) {
        super(message);
    }

    public ReplicationException(String message, Throwable cause) {
        super(message, cause);
    }
}
