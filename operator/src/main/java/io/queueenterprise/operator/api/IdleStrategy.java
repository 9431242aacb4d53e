package io.queueenterprise.operator.api;

/** How a node's one duty-cycle thread idles; the node-configuration document's {@code idleStrategy}. */
public enum IdleStrategy {
    /** Lowest latency; burns its whole pinned core. */
    BUSY_SPIN, YIELDING, BACKOFF, SLEEPING
}
