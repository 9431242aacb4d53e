package io.queueenterprise.replication.wire;

import org.agrona.DirectBuffer;

/**
 * DESCRIPTOR: the leader's answer to a HELLO, per queue: where the follower's copy and the leader's part (the
 * follower keeps indexes up to {@code resumeAfter} and takes everything after it), the leader's term history (the
 * follower records it), and the queue's descriptor file exactly as the leader holds it (0 bytes: none).
 * <pre>
 * u16 queue, i64 resume after (-1: from the start), i64 leader's first index (-1: empty),
 * u16 term count, (i64 term, i64 last index before the term) per term,
 * i32 descriptor length (0..{@value #MAX_DESCRIPTOR}), descriptor bytes
 * </pre>
 */
public final class DescriptorBody {
    public static final int MAX_DESCRIPTOR = 64 * 1024;

    private final BodyReader reader = new BodyReader();
    private DirectBuffer buffer;
    private int queue;
    private long resumeAfter;
    private long leaderFirstIndex;
    private int termCount;
    private int termOffset;
    private int descriptorOffset;
    private int descriptorLength;

    public DescriptorBody wrap(Frame frame) throws MalformedFrameException {
        reader.reset(frame.buffer(), frame.bodyOffset(), frame.bodyLength());
        queue = reader.u16("queue");
        if (queue >= HelloBody.MAX_QUEUES) {
            throw new MalformedFrameException("queue", "queue " + queue + " is outside 0.." + (HelloBody.MAX_QUEUES - 1));
        }
        resumeAfter = reader.i64("resumeAfter");
        if (resumeAfter < -1) {
            throw new MalformedFrameException("resumeAfter", "negative index " + resumeAfter);
        }
        leaderFirstIndex = reader.i64("leaderFirstIndex");
        if (leaderFirstIndex < -1) {
            throw new MalformedFrameException("leaderFirstIndex", "negative index " + leaderFirstIndex);
        }
        termCount = reader.u16("termCount");
        termOffset = TermHistoryCodec.validate(reader, termCount, "terms");
        descriptorLength = reader.i32("descriptorLength");
        if (descriptorLength < 0 || descriptorLength > MAX_DESCRIPTOR) {
            throw new MalformedFrameException("descriptorLength", descriptorLength + " is outside 0.." + MAX_DESCRIPTOR);
        }
        descriptorOffset = reader.skip(descriptorLength, "descriptor");
        reader.expectEnd("body");
        this.buffer = frame.buffer();
        return this;
    }

    public int queue() {
        return queue;
    }

    public long resumeAfter() {
        return resumeAfter;
    }

    public long leaderFirstIndex() {
        return leaderFirstIndex;
    }

    public int termCount() {
        return termCount;
    }

    public long term(int i) {
        return buffer.getLong(termOffset + i * TermHistoryCodec.ENTRY_LENGTH, Frame.ORDER);
    }

    public long previousLastIndex(int i) {
        return buffer.getLong(termOffset + i * TermHistoryCodec.ENTRY_LENGTH + 8, Frame.ORDER);
    }

    /** The descriptor file's bytes; null when the leader's queue has none. */
    public byte[] descriptor() {
        if (descriptorLength == 0) {
            return null;
        }
        byte[] bytes = new byte[descriptorLength];
        buffer.getBytes(descriptorOffset, bytes);
        return bytes;
    }
}
