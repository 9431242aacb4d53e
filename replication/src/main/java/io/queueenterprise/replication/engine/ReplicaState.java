package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.QueueStatus;

import java.util.EnumSet;
import java.util.Set;

/**
 * How a hosted queue takes part in its role: one state per queue, changed only by
 * {@link QueueReplica#transition}, which checks it against {@link #canMoveTo} and logs it. What the status, the
 * metrics and a follower's ACK report ({@link QueueStatus.State}) is derived from it by {@link #reported()}; no
 * reported state is kept beside it.
 *
 * <p>{@link QueueReplica.Phase} says whether the queue takes part at all (opening, settling after a role change);
 * while it does not, the state is {@link #STOPPED} (or {@link #CORRUPTED} for a damaged copy, or
 * {@link #BEHIND_RETENTION} when the leader refused it in the meantime).
 */
enum ReplicaState {
    /** Opening, settling after a role change, standby or fenced: takes no part. */
    STOPPED(QueueStatus.State.STOPPED),
    /** Leader: takes appends and streams them to the followers. */
    LEADING(QueueStatus.State.LIVE),
    /** Follower: said HELLO (or owes none: the HELLO follows the session), waits for the DESCRIPTOR; takes no DATA. */
    AWAITING_DESCRIPTOR(QueueStatus.State.CATCHING_UP),
    /** Follower: synchronised (DESCRIPTOR applied), stores DATA, behind the leader's last reported index. */
    CATCHING_UP(QueueStatus.State.CATCHING_UP),
    /** Follower: synchronised and holding the leader's last reported index. */
    LIVE(QueueStatus.State.LIVE),
    /**
     * Follower: its writer fell behind (or still had excerpts in hand when a DESCRIPTOR came): frames are passed
     * over, not stored nor counted as drops, and a HELLO is owed once the writer drained. Not synchronised, so not
     * LIVE: reported CATCHING_UP.
     */
    WAITING_FOR_WRITER(QueueStatus.State.CATCHING_UP),
    /** Follower: the leader no longer holds the excerpt after this copy's last one; waits for an operator. */
    BEHIND_RETENTION(QueueStatus.State.BEHIND_RETENTION),
    /** Follower: a write failed for want of room; a heartbeat that finds room again resynchronises it. */
    DISK_FULL(QueueStatus.State.DISK_FULL),
    /** A write or a DESCRIPTOR could not be applied, or the copy on disk is damaged. */
    CORRUPTED(QueueStatus.State.CORRUPTED);

    private final QueueStatus.State reported;
    private Set<ReplicaState> next;

    static {
        // A failure can strike in any state, and a role change (or stop) leaves any state for STOPPED.
        STOPPED.next = EnumSet.of(LEADING, AWAITING_DESCRIPTOR, BEHIND_RETENTION, CORRUPTED);
        LEADING.next = EnumSet.of(STOPPED, CORRUPTED);
        AWAITING_DESCRIPTOR.next = EnumSet.of(CATCHING_UP, LIVE, WAITING_FOR_WRITER, BEHIND_RETENTION, DISK_FULL,
                CORRUPTED, STOPPED);
        CATCHING_UP.next = EnumSet.of(LIVE, AWAITING_DESCRIPTOR, WAITING_FOR_WRITER, BEHIND_RETENTION, DISK_FULL,
                CORRUPTED, STOPPED);
        LIVE.next = EnumSet.of(CATCHING_UP, AWAITING_DESCRIPTOR, WAITING_FOR_WRITER, BEHIND_RETENTION, DISK_FULL,
                CORRUPTED, STOPPED);
        WAITING_FOR_WRITER.next = EnumSet.of(AWAITING_DESCRIPTOR, BEHIND_RETENTION, DISK_FULL, CORRUPTED, STOPPED);
        BEHIND_RETENTION.next = EnumSet.of(CATCHING_UP, LIVE, WAITING_FOR_WRITER, DISK_FULL, CORRUPTED, STOPPED);
        DISK_FULL.next = EnumSet.of(AWAITING_DESCRIPTOR, BEHIND_RETENTION, CORRUPTED, STOPPED);
        CORRUPTED.next = EnumSet.of(CATCHING_UP, LIVE, WAITING_FOR_WRITER, BEHIND_RETENTION, DISK_FULL, STOPPED);
    }

    ReplicaState(QueueStatus.State reported) {
        this.reported = reported;
    }

    /** What the status, the metrics and an ACK report for a queue in this state. */
    QueueStatus.State reported() {
        return reported;
    }

    /** Whether a queue may move from this state to {@code to}; staying (a new detail) is always allowed. */
    boolean canMoveTo(ReplicaState to) {
        return to == this || next.contains(to);
    }

    /** A follower synchronised with its leader (DESCRIPTOR applied): the only states in which DATA is stored. */
    boolean synced() {
        return this == CATCHING_UP || this == LIVE;
    }

    /** Thrown on a transition the table does not allow (when assertions are enabled, as in every test). */
    static final class IllegalTransitionException extends IllegalStateException {
        final ReplicaState from;
        final ReplicaState to;

        IllegalTransitionException(String queue, ReplicaState from, ReplicaState to) {
            super(queue + ": no transition " + from + " -> " + to);
            this.from = from;
            this.to = to;
        }
    }
}
