package io.queueenterprise.replication;

/** A request (promote, follow, fence) or frame carried a term older than one this node has already persisted. */
public final class StaleTermException extends ReplicationException {
    private static final long serialVersionUID = 1L;
    private final long requestedTerm;
    private final long currentTerm;

    public StaleTermException(String what, long requestedTerm, long currentTerm) {
        super(what + ": term " + requestedTerm + " is stale; this node has already persisted term " + currentTerm);
        this.requestedTerm = requestedTerm;
        this.currentTerm = currentTerm;
    }

    public long requestedTerm() {
        return requestedTerm;
    }

    public long currentTerm() {
        return currentTerm;
    }
}
