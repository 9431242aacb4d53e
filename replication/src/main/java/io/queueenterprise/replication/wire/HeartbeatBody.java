package io.queueenterprise.replication.wire;

import org.agrona.DirectBuffer;

/**
 * HEARTBEAT: liveness both ways. From a leader, each queue's last and quorum index (so an idle follower still
 * learns the quorum index, and how far behind it is); from a follower, count 0.
 * <pre>i64 sender's clock (ns), u16 count (0..{@value HelloBody#MAX_QUEUES}), per queue: i64 last index, i64 quorum index</pre>
 */
public final class HeartbeatBody {
    private final BodyReader reader = new BodyReader();
    private DirectBuffer buffer;
    private long sentNanos;
    private int count;
    private int entries;

    public HeartbeatBody wrap(Frame frame) throws MalformedFrameException {
        reader.reset(frame.buffer(), frame.bodyOffset(), frame.bodyLength());
        sentNanos = reader.i64("sentNanos");
        count = reader.u16("count");
        if (count > HelloBody.MAX_QUEUES) {
            throw new MalformedFrameException("count", count + " is more than " + HelloBody.MAX_QUEUES);
        }
        entries = reader.position();
        for (int i = 0; i < count; i++) {
            if (reader.i64("lastIndex") < -1) {
                throw new MalformedFrameException("lastIndex", "negative index");
            }
            if (reader.i64("quorumIndex") < -1) {
                throw new MalformedFrameException("quorumIndex", "negative index");
            }
        }
        reader.expectEnd("body");
        this.buffer = frame.buffer();
        return this;
    }

    public long sentNanos() {
        return sentNanos;
    }

    public int count() {
        return count;
    }

    public long lastIndex(int q) {
        return buffer.getLong(entries + q * 16, Frame.ORDER);
    }

    public long quorumIndex(int q) {
        return buffer.getLong(entries + q * 16 + 8, Frame.ORDER);
    }
}
