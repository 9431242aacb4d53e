package io.queueenterprise.operator.failover;

/**
 * Where the operator records elections: the QueueCluster's status. {@link #recordTerm} must have reached the API
 * server when it returns, since a node may act on the term right after; that is what keeps a term from ever being
 * issued twice, even across operator restarts.
 */
public interface ElectionRecorder {
    /** Persists {@code plan.term()} as the highest term issued, and the failover as in progress; throws if not persisted. */
    void recordTerm(Plan.Elect plan);

    /** Records {@code leader} as leading at {@code term}, and the failover as completed. */
    void recordLeader(String leader, long term);
}
