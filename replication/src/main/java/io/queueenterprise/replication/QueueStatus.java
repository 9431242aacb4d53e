package io.queueenterprise.replication;

import java.util.List;

/**
 * One queue's replication state on one node. Fields are only ever added (see {@link NodeStatus}); the ones a node
 * older than them does not send read as "nothing to report".
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
 * @param stateDetail      why the queue is in its state (which excerpt is damaged, how long its writer has been
 *                         blocked, why it cannot be opened yet, ...); empty when there is nothing to say
 * @param writer           the thread that writes this queue's store: blocked now, and its stalls since start
 * @param resyncs          times this follower's copy fell back to resynchronising with its leader since start
 * @param quarantines      the excerpts this replica moved aside, as found in the queue's {@code quarantine/} folder
 */
public record QueueStatus(String name, State state, long lastIndex, long durableIndex, long quorumIndex,
                          long firstIndex, List<PeerProgress> peers, long bytesReplicated, long framesDropped,
                          String stateDetail, Writer writer, Resyncs resyncs, Quarantines quarantines) {
    public QueueStatus {
        peers = List.copyOf(peers);
        stateDetail = stateDetail == null ? "" : stateDetail;
        writer = writer == null ? Writer.NONE : writer;
        resyncs = resyncs == null ? Resyncs.NONE : resyncs;
        quarantines = quarantines == null ? Quarantines.NONE : quarantines;
    }

    /** A status with nothing to report beyond the indexes (stand-ins, tests). */
    public QueueStatus(String name, State state, long lastIndex, long durableIndex, long quorumIndex, long firstIndex,
                       List<PeerProgress> peers, long bytesReplicated, long framesDropped) {
        this(name, state, lastIndex, durableIndex, quorumIndex, firstIndex, peers, bytesReplicated, framesDropped,
                "", Writer.NONE, Resyncs.NONE, Quarantines.NONE);
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

    /**
     * The queue's writer thread (a follower's writes, and the scan for the last index at a role change), which
     * Chronicle can block for seconds: a process holding the queue's write lock stalled or killed.
     *
     * @param blockedMillis how long the operation in hand has been running; 0 when idle or quick
     * @param stalls        times since start it was blocked for a second or more
     * @param lastStallAt   when the latest such stall began, ISO-8601 UTC; null when none
     */
    public record Writer(long blockedMillis, long stalls, String lastStallAt) {
        public static final Writer NONE = new Writer(0, 0, null);
    }

    /**
     * A follower's copy stopped taking the leader's stream and started over from what it holds (a HELLO), for a
     * reason other than a new session: nothing is lost or duplicated, but the queue is CATCHING_UP meanwhile.
     *
     * @param count      resynchronisations since the node started
     * @param lastCause  the latest one's cause; null when none
     * @param lastDetail the latest one's circumstances in words; null when none
     * @param lastAt     when the latest one began, ISO-8601 UTC; null when none
     */
    public record Resyncs(long count, ResyncCause lastCause, String lastDetail, String lastAt) {
        public static final Resyncs NONE = new Resyncs(0, null, null, null);
    }

    /** Why a follower's copy resynchronised. */
    public enum ResyncCause {
        /** Its writer stayed behind (blocked in the store) longer than the subscription may wait: its frames were passed over. */
        WRITER_BEHIND,
        /** An excerpt arrived that does not follow the last one taken (a frame lost or reordered). */
        GAP,
        /** A piece of a large excerpt did not continue the one being assembled. */
        BROKEN_PIECES,
        /** The disk had room again after DISK_FULL. */
        DISK_ROOM_AGAIN
    }

    /**
     * Excerpts moved aside into {@code <queue>/quarantine/<time>/}: never served, never deleted by the node. Counted
     * from that folder, so a quarantine made before the node's latest start is reported too.
     *
     * @param count           quarantine folders of this queue on disk
     * @param lastReason      the newest one's reason; null when none
     * @param lastAt          when the newest one was made, ISO-8601 UTC; null when none
     * @param lastDirectory   the newest one's folder (absolute path); null when none
     * @param lastExcerpts    excerpts saved in the newest one; -1 when none or not recorded (made by an older node)
     * @param lastDetail      what was found, for a damaged copy; null otherwise
     */
    public record Quarantines(long count, QuarantineReason lastReason, String lastAt, String lastDirectory,
                              long lastExcerpts, String lastDetail) {
        public static final Quarantines NONE = new Quarantines(0, null, null, null, -1, null);
    }

    /** Why excerpts were moved aside. */
    public enum QuarantineReason {
        /**
         * After the last index shared with a new leader: written under a term the leader's history does not continue,
         * never acknowledged by a quorum (this replica led, or followed such a leader, and was failed over).
         */
        DIVERGENT,
        /** From the first excerpt whose stored bytes no longer matched their checksum: fetched again from the leader. */
        DAMAGED
    }
}
