package io.queueenterprise.replication;

import java.util.List;

/**
 * One queue's replication state on one node.
 *
 * @param name             the queue's name from the node configuration
 * @param state            whether the queue is live, catching up, or stopped for a reason an operator must see
 * @param lastIndex        the last excerpt this node holds; -1 when empty
 * @param durableIndex     the last index this node holds with everything before it (what it acknowledges);
 *                         "holds" means written to the mapped file (page cache), as Kafka's acks=all
 * @param quorumIndex      the highest index a majority holds, as far as this node knows; -1 when unknown
 * @param firstIndex       the first index still held (retention deletes below it); -1 when empty
 * @param peers            on a leader: each follower's progress; empty on a follower
 * @param bytesReplicated  excerpt bytes sent (leader) or written (follower) since start
 * @param framesDropped    frames dropped since start (malformed, unauthenticated, stale term, unknown session)
 */
public record QueueStatus(String name, State state, long lastIndex, long durableIndex, long quorumIndex,
                          long firstIndex, List<PeerProgress> peers, long bytesReplicated, long framesDropped) {
    public QueueStatus {
        peers = List.copyOf(peers);
    }

    /** What a queue's replication is doing. */
    public enum State {
        /** Up to date with the leader (or leading). */
        LIVE,
        /** Copying what it missed from the leader; switches to LIVE without a gap or duplicate. */
        CATCHING_UP,
        /** The leader no longer holds the next index this follower needs (retention): needs a new copy. */
        BEHIND_RETENTION,
        /** Disk full: appends (leader) or writes (follower) refused; nothing corrupted. */
        DISK_FULL,
        /** A cycle file is damaged at an index; replication of this queue stopped there. */
        CORRUPTED,
        /** Not replicating: standby or fenced. */
        STOPPED
    }

    /**
     * A follower as its leader sees it.
     *
     * @param nodeId        the follower's id
     * @param connected     whether its session is established and authenticated
     * @param durableIndex  the last index it acknowledged as held
     * @param lagExcerpts   leader's last index minus the follower's durable index
     * @param lagNanos      age of the oldest excerpt the follower has not acknowledged; 0 when caught up
     * @param state         the follower's own state, as it last reported it
     */
    public record PeerProgress(String nodeId, boolean connected, long durableIndex, long lagExcerpts, long lagNanos,
                               State state) {
    }
}
