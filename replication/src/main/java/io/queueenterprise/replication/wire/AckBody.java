package io.queueenterprise.replication.wire;

import io.queueenterprise.replication.QueueStatus;

/**
 * ACK: a follower holds queue {@code queue} with no gap up to {@code durableIndex} (written to its mapped file),
 * and is in state {@code state}.
 * <pre>u16 queue, u8 state ({@link ReplicaStateCode}), i64 durable index (-1: nothing)</pre>
 */
public final class AckBody {
    public static final int LENGTH = 11;

    private final BodyReader reader = new BodyReader();
    private int queue;
    private QueueStatus.State state;
    private long durableIndex;

    public AckBody wrap(Frame frame) throws MalformedFrameException {
        if (frame.bodyLength() != LENGTH) {
            throw new MalformedFrameException("body", "ACK body must be " + LENGTH + " bytes, is " + frame.bodyLength());
        }
        reader.reset(frame.buffer(), frame.bodyOffset(), frame.bodyLength());
        queue = reader.u16("queue");
        if (queue >= HelloBody.MAX_QUEUES) {
            throw new MalformedFrameException("queue", "queue " + queue + " is outside 0.." + (HelloBody.MAX_QUEUES - 1));
        }
        int s = reader.u8("state");
        state = ReplicaStateCode.state(s);
        if (state == null) {
            throw new MalformedFrameException("state", "unknown state code " + s);
        }
        durableIndex = reader.i64("durableIndex");
        if (durableIndex < -1) {
            throw new MalformedFrameException("durableIndex", "negative index " + durableIndex);
        }
        return this;
    }

    public int queue() {
        return queue;
    }

    public QueueStatus.State state() {
        return state;
    }

    public long durableIndex() {
        return durableIndex;
    }
}
