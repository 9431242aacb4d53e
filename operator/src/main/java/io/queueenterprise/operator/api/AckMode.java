package io.queueenterprise.operator.api;

/** When an append counts as done; the node-configuration document's {@code ackMode}, same names. */
public enum AckMode {
    /** The leader appended it; followers copy it as fast as they can. */
    ASYNC,
    /** As async for the appender, but readers see only excerpts a majority holds. */
    REPLICATED_READS,
    /** The appender returns only when a majority of replicas (leader included) holds the excerpt. */
    QUORUM
}
