package io.queueenterprise.replication.wire;

import org.agrona.DirectBuffer;

/**
 * DATA: a batch of one queue's raw excerpts exactly as stored (still sealed when encrypted), each with its index,
 * indexes strictly increasing, plus the leader's quorum index (followers bound replicated reads by it).
 * <pre>
 * u16 queue, u16 reserved (0), i32 count (1..{@value #MAX_COUNT}), i64 quorum index (-1: none),
 * per excerpt: i64 index, i32 length, bytes
 * </pre>
 * {@link #wrap} walks the whole batch once; {@link #next()} then iterates it without further checks.
 */
public final class DataBody {
    public static final int MAX_COUNT = 65_535;
    static final int PREFIX_LENGTH = 16;
    static final int EXCERPT_HEADER_LENGTH = 12;

    private final BodyReader reader = new BodyReader();
    private DirectBuffer buffer;
    private int queue;
    private int count;
    private long quorumIndex;
    private int firstExcerpt;
    private int cursor;
    private int remaining;
    private long index;
    private int excerptOffset;
    private int excerptLength;

    public DataBody wrap(Frame frame) throws MalformedFrameException {
        reader.reset(frame.buffer(), frame.bodyOffset(), frame.bodyLength());
        queue = reader.u16("queue");
        if (queue >= HelloBody.MAX_QUEUES) {
            throw new MalformedFrameException("queue", "queue " + queue + " is outside 0.." + (HelloBody.MAX_QUEUES - 1));
        }
        if (reader.u16("reserved") != 0) {
            throw new MalformedFrameException("reserved", "must be 0");
        }
        count = reader.i32("count");
        if (count < 1 || count > MAX_COUNT) {
            throw new MalformedFrameException("count", count + " is outside 1.." + MAX_COUNT);
        }
        quorumIndex = reader.i64("quorumIndex");
        if (quorumIndex < -1) {
            throw new MalformedFrameException("quorumIndex", "negative index " + quorumIndex);
        }
        firstExcerpt = reader.position();
        long previous = -1;
        for (int i = 0; i < count; i++) {
            long excerptIndex = reader.i64("excerpt.index");
            if (excerptIndex <= previous) {
                throw new MalformedFrameException("excerpt.index", "indexes must increase: 0x" + Long.toHexString(excerptIndex)
                        + " after 0x" + Long.toHexString(previous));
            }
            previous = excerptIndex;
            int length = reader.i32("excerpt.length");
            if (length < 0) {
                throw new MalformedFrameException("excerpt.length", "negative length " + length);
            }
            reader.skip(length, "excerpt.bytes");
        }
        reader.expectEnd("body");
        this.buffer = frame.buffer();
        this.cursor = firstExcerpt;
        this.remaining = count;
        return this;
    }

    public int queue() {
        return queue;
    }

    public int count() {
        return count;
    }

    public long quorumIndex() {
        return quorumIndex;
    }

    /** Moves to the next excerpt of the batch; false after the last. */
    public boolean next() {
        if (remaining == 0) {
            return false;
        }
        remaining--;
        index = buffer.getLong(cursor, Frame.ORDER);
        excerptLength = buffer.getInt(cursor + 8, Frame.ORDER);
        excerptOffset = cursor + EXCERPT_HEADER_LENGTH;
        cursor = excerptOffset + excerptLength;
        return true;
    }

    public long index() {
        return index;
    }

    /** Offset of the current excerpt's bytes in {@link #buffer()}. */
    public int excerptOffset() {
        return excerptOffset;
    }

    public int excerptLength() {
        return excerptLength;
    }

    public DirectBuffer buffer() {
        return buffer;
    }
}
