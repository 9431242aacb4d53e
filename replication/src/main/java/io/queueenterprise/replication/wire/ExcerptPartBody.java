package io.queueenterprise.replication.wire;

import org.agrona.DirectBuffer;

/**
 * EXCERPT_PART: one consecutive piece of a single raw excerpt too large for a DATA batch (up to Chronicle's maximum
 * excerpt, 16 MiB by default, against a 1 MiB Aeron message limit). The leader sends the pieces of one excerpt in
 * order, offsets contiguous from 0; the follower assembles them and writes the excerpt at its index only when the
 * last piece arrived, so a replica never holds part of an excerpt.
 * <pre>
 * u16 queue, u16 reserved (0), i64 quorum index (-1: none), i64 index, i32 total length (1..{@value #MAX_TOTAL_LENGTH}),
 * i32 offset of this piece, then the piece's bytes (at least one) up to the end of the body; offset + piece &le; total
 * </pre>
 * Unlike the older bodies, {@link #wrap} also checks the frame's type: a part is never mistaken for another body.
 */
public final class ExcerptPartBody {
    /** Chronicle cannot store an excerpt of 1 GiB or more (its overlap size is a quarter of at most a 4 GiB block). */
    public static final int MAX_TOTAL_LENGTH = 1 << 30;
    /** Bytes before the piece. */
    public static final int PREFIX_LENGTH = 2 + 2 + 8 + 8 + 4 + 4;

    private final BodyReader reader = new BodyReader();
    private DirectBuffer buffer;
    private int queue;
    private long quorumIndex;
    private long index;
    private int totalLength;
    private int partOffset;
    private int bytesOffset;
    private int bytesLength;

    public ExcerptPartBody wrap(Frame frame) throws MalformedFrameException {
        if (frame.type() != FrameType.EXCERPT_PART) {
            throw new MalformedFrameException("type", "not an EXCERPT_PART frame: " + frame.type());
        }
        reader.reset(frame.buffer(), frame.bodyOffset(), frame.bodyLength());
        queue = reader.u16("queue");
        if (queue >= HelloBody.MAX_QUEUES) {
            throw new MalformedFrameException("queue", "queue " + queue + " is outside 0.." + (HelloBody.MAX_QUEUES - 1));
        }
        if (reader.u16("reserved") != 0) {
            throw new MalformedFrameException("reserved", "must be 0");
        }
        quorumIndex = reader.i64("quorumIndex");
        if (quorumIndex < -1) {
            throw new MalformedFrameException("quorumIndex", "negative index " + quorumIndex);
        }
        index = reader.i64("index");
        if (index < 0) {
            throw new MalformedFrameException("index", "negative index " + index);
        }
        totalLength = reader.i32("totalLength");
        if (totalLength < 1 || totalLength > MAX_TOTAL_LENGTH) {
            throw new MalformedFrameException("totalLength", totalLength + " is outside 1.." + MAX_TOTAL_LENGTH);
        }
        partOffset = reader.i32("offset");
        if (partOffset < 0 || partOffset >= totalLength) {
            throw new MalformedFrameException("offset", partOffset + " is outside 0.." + (totalLength - 1));
        }
        bytesOffset = reader.position();
        bytesLength = frame.bodyOffset() + frame.bodyLength() - bytesOffset;
        if (bytesLength < 1 || bytesLength > totalLength - partOffset) {
            throw new MalformedFrameException("bytes", bytesLength + " bytes at offset " + partOffset
                    + " do not fit 1.." + (totalLength - partOffset) + " left of the " + totalLength + "-byte excerpt");
        }
        reader.skip(bytesLength, "bytes");
        reader.expectEnd("body");
        this.buffer = frame.buffer();
        return this;
    }

    public int queue() {
        return queue;
    }

    public long quorumIndex() {
        return quorumIndex;
    }

    /** The excerpt's index. */
    public long index() {
        return index;
    }

    /** The whole excerpt's length. */
    public int totalLength() {
        return totalLength;
    }

    /** Where this piece starts within the excerpt. */
    public int partOffset() {
        return partOffset;
    }

    /** Offset of this piece's bytes in {@link #buffer()}. */
    public int bytesOffset() {
        return bytesOffset;
    }

    public int bytesLength() {
        return bytesLength;
    }

    /** Whether this piece ends the excerpt. */
    public boolean isLast() {
        return partOffset + bytesLength == totalLength;
    }

    public DirectBuffer buffer() {
        return buffer;
    }
}
