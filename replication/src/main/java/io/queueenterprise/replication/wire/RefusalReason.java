package io.queueenterprise.replication.wire;

/** Why a node refused a peer's request, sent in a REFUSAL frame. */
public enum RefusalReason {
    /** The frame's term is older than the receiver's. */
    STALE_TERM(1),
    /** The follower's next index is below what the leader still holds (retention deleted it). */
    BEHIND_RETENTION(2),
    /** The receiver is not the leader (follower, fenced, standby) or leads another term. */
    NOT_LEADER(3),
    /** The replicas do not host the same queues in the same order. */
    QUEUE_MISMATCH(4),
    /** A follower could not store an excerpt (disk full, damaged cycle file). */
    CANNOT_STORE(5);

    public final int code;

    RefusalReason(int code) {
        this.code = code;
    }

    /** The reason of {@code code}, or null for an unknown one. */
    public static RefusalReason of(int code) {
        for (RefusalReason r : values()) {
            if (r.code == code) {
                return r;
            }
        }
        return null;
    }
}
