package io.queueenterprise.replication.node;

import io.queueenterprise.replication.ReplicationException;

/**
 * An admin request that did not succeed: refused by the node ({@link #httpStatus()} and the contract's
 * {@link #errorCode()}, e.g. 409 {@code STALE_TERM}), or no answer at all ({@code httpStatus() == 0},
 * {@code errorCode() == "UNREACHABLE"}).
 */
public final class AdminClientException extends ReplicationException {
    private static final long serialVersionUID = 1L;
    private final int httpStatus;
    private final String errorCode;

    AdminClientException(int httpStatus, String errorCode, String message, Throwable cause) {
        super(message, cause);
        this.httpStatus = httpStatus;
        this.errorCode = errorCode;
    }

    public int httpStatus() {
        return httpStatus;
    }

    public String errorCode() {
        return errorCode;
    }
}
