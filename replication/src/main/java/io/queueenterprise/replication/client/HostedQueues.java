package io.queueenterprise.replication.client;

import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.engine.EngineSettings;

/**
 * What the client gateway reads of the replication engine, on the duty-cycle thread that runs both: the role, term
 * and leader, and per hosted queue its store (replaced when a divergence is quarantined) and quorum index. The
 * gateway never changes replication state; it appends to the leader's store as a library appender would.
 */
public interface HostedQueues {
    NodeStatus.Role role();

    long term();

    /** The leader's position in the configuration's peer list, or -1 when this node knows none. */
    int leaderPosition();

    int queueCount();

    EngineSettings.QueueSettings spec(int queue);

    /** The queue's store, or null while the node is still opening it (off the duty thread). */
    ReplicaStore store(int queue);

    /** The highest index a majority of replicas holds (leader's view), -1 when none. */
    long quorumIndex(int queue);

    /**
     * Whether this node may acknowledge an append at {@code now} ({@code System.nanoTime}): it leads, holds its lease
     * and its term is confirmed (docs/replication.md "Leader lease").
     */
    boolean mayAcknowledge(long now);
}
