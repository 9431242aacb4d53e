package io.queueenterprise.queue;

import java.time.Duration;

/**
 * An append on a node-hosted queue was written locally but not acknowledged: in quorum mode, a majority did not
 * acknowledge it in time (below); in any other mode, the node's leader lease lapsed while it was written
 * ({@link #timeout()} zero). In both cases:
 * a quorum-mode append was written locally (the leader holds it at {@link #index()}) but a majority of replicas
 * did not acknowledge it within the ack timeout. It was not rolled back: it may still become durable when the
 * followers catch up, or be quarantined if this node loses its leadership before they do. Do not treat it as
 * lost and do not treat it as acknowledged; a consumer reading with replicated reads sees it only once a
 * majority holds it.
 */
public final class AckTimeoutException extends ExcerptException {
    private static final long serialVersionUID = 1L;
    private final Duration timeout;

    public AckTimeoutException(String queueName, long index, Duration timeout, long quorumIndex) {
        super(queueName, index, "written locally but not acknowledged by a majority of replicas within " + timeout
                + " (quorum index 0x" + Long.toHexString(quorumIndex) + "); it may still become durable, or be quarantined"
                + " if this node loses leadership first", null);
        this.timeout = timeout;
    }

    /**
     * Written locally, but the node's leader lease lapsed before the write could be acknowledged ({@code why}); as
     * with a quorum timeout, it may still be kept or be quarantined. {@link #timeout()} is zero.
     */
    public AckTimeoutException(String queueName, long index, String why) {
        super(queueName, index, "written locally but not acknowledged: " + why + "; it may still be kept, or be"
                + " quarantined if this node loses leadership", null);
        this.timeout = Duration.ZERO;
    }

    public Duration timeout() {
        return timeout;
    }
}
