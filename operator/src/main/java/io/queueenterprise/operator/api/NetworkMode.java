package io.queueenterprise.operator.api;

/** Which network the replicas' Aeron traffic uses. */
public enum NetworkMode {
    /** The pod network: portable, one more hop (veth, bridge or overlay). */
    POD,
    /** The node's own network stack ({@code hostNetwork: true}): the lowest latency; one replica per node. */
    HOST
}
