package io.queueenterprise.operator.failover;

/** What the operator saw of one replica in one reconcile: its admin endpoint's answer, or why there was none. */
public sealed interface ReplicaObservation {
    String replica();

    /** The node answered {@code GET /v1/status}. */
    record Reachable(String replica, NodeStatusView status) implements ReplicaObservation {
    }

    /** The pod is missing, not running, being deleted, or its admin endpoint did not answer. */
    record Lost(String replica, String reason) implements ReplicaObservation {
    }
}
