package io.queueenterprise.replication;

import io.queueenterprise.replication.engine.CpuPinning;

import java.util.List;

/**
 * A node's state as the admin endpoint reports it (JSON) and the operator reads it.
 *
 * @param nodeId       this node's id from its configuration
 * @param role         what the node does now
 * @param term         the highest term this node has persisted; 0 before any
 * @param leaderNodeId the leader it follows, itself when leading, null when it knows none
 * @param queues       every hosted queue, in configuration order
 * @param cpusAllowedList this process's {@code Cpus_allowed_list} (read at start): the operator's Pinned condition
 *                     compares it with the cores the kubelet granted; null when unknown
 */
public record NodeStatus(String nodeId, Role role, long term, String leaderNodeId, List<QueueStatus> queues,
                         String cpusAllowedList) {
    /** Read once: the kernel's grant does not change under a running container. */
    private static final String CPUS_ALLOWED_LIST = CpuPinning.allowedList();

    public NodeStatus {
        queues = List.copyOf(queues);
    }

    /** A status of this process, with its own {@code Cpus_allowed_list}. */
    public NodeStatus(String nodeId, Role role, long term, String leaderNodeId, List<QueueStatus> queues) {
        this(nodeId, role, term, leaderNodeId, queues, CPUS_ALLOWED_LIST);
    }

    /** What a node does. */
    public enum Role {
        /** Started, no term yet or not yet told whom to follow: serves nothing, accepts nothing. */
        STANDBY,
        /** Accepts appends and ships them to followers. */
        LEADER,
        /** Receives excerpts from the leader and writes them at the same indexes; can never append. */
        FOLLOWER,
        /** Told to stop leading; serves nothing until told to follow or promoted at a higher term. */
        FENCED
    }
}
