package io.queueenterprise.replication.wire;

/**
 * Writes a HEARTBEAT body ({@link HeartbeatBody}'s layout): {@link #begin} with the sender's clock and the queue
 * count, then {@link #queue} once per queue (a follower's heartbeat has none). Allocation-free.
 */
public final class HeartbeatEncoder {
    private FrameEncoder out;
    private int remaining;

    public HeartbeatEncoder begin(FrameEncoder out, long sentNanos, int queueCount) {
        if (queueCount < 0 || queueCount > HelloBody.MAX_QUEUES) {
            throw new IllegalArgumentException("queue count " + queueCount + " is outside 0.." + HelloBody.MAX_QUEUES);
        }
        this.out = out.i64(sentNanos).u16(queueCount);
        this.remaining = queueCount;
        return this;
    }

    /** The next queue's last and quorum index, in configuration order. */
    public HeartbeatEncoder queue(long lastIndex, long quorumIndex) {
        if (remaining-- <= 0) {
            throw new IllegalStateException("more queues than the count given to begin");
        }
        out.i64(lastIndex).i64(quorumIndex);
        return this;
    }
}
