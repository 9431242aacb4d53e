package io.queueenterprise.operator.failover;

/** A node's admin endpoint refused a request or could not be reached; {@link #reason()} says which. */
public final class AdminException extends Exception {
    private static final long serialVersionUID = 1L;

    /** Why a request failed. */
    public enum Reason {
        /** No answer: connection refused, reset, or the timeout passed. */
        UNREACHABLE,
        /** 401: the operator's token is not the node's. */
        UNAUTHORIZED,
        /** 409: the node has seen a higher term (or the same term with another leader). */
        STALE_TERM,
        /** 400 UNKNOWN_PEER: follow named a replica the node does not know. */
        UNKNOWN_PEER,
        /** 400 BAD_REQUEST, or any other answer the contract does not define. */
        PROTOCOL
    }

    private final Reason reason;
    private final String node;

    public AdminException(Reason reason, String node, String message, Throwable cause) {
        super(node + ": " + message, cause);
        this.reason = reason;
        this.node = node;
    }

    public Reason reason() {
        return reason;
    }

    public String node() {
        return node;
    }
}
