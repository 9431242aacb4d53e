package io.queueenterprise.replication.wire;

import io.queueenterprise.replication.QueueStatus;

/** Writes an ACK body ({@link AckBody}'s layout) into a frame begun with {@link FrameEncoder#begin}. Allocation-free. */
public final class AckEncoder {
    /** {@code durableIndex}: -1 for nothing held. */
    public FrameEncoder encode(FrameEncoder out, int queue, QueueStatus.State state, long durableIndex) {
        return out.u16(queue).u8(ReplicaStateCode.code(state)).i64(durableIndex);
    }
}
