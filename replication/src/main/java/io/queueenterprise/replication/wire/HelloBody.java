package io.queueenterprise.replication.wire;

import org.agrona.DirectBuffer;

import java.nio.charset.StandardCharsets;

/**
 * HELLO: a follower's state per queue, in its configuration order.
 * <pre>
 * u16 queue count (1..{@value #MAX_QUEUES})
 * per queue: u8 name length (1..255), name (UTF-8), i64 last index (-1: empty; {@value #NOT_OPEN}: not open yet),
 *            u16 term count, (i64 term, i64 last index before the term) per term, terms increasing
 * </pre>
 */
public final class HelloBody {
    public static final int MAX_QUEUES = 1024;

    private final BodyReader reader = new BodyReader();
    private final int[] nameOffsets = new int[MAX_QUEUES];
    private final int[] nameLengths = new int[MAX_QUEUES];
    /** The follower has not opened this queue yet (Chronicle still recovering it): nothing to stream. */
    public static final long NOT_OPEN = -2;
    private final long[] lastIndexes = new long[MAX_QUEUES];
    private final int[] termCounts = new int[MAX_QUEUES];
    private final int[] termOffsets = new int[MAX_QUEUES];
    private DirectBuffer buffer;
    private int queueCount;

    public HelloBody wrap(Frame frame) throws MalformedFrameException {
        reader.reset(frame.buffer(), frame.bodyOffset(), frame.bodyLength());
        int count = reader.u16("queueCount");
        if (count < 1 || count > MAX_QUEUES) {
            throw new MalformedFrameException("queueCount", count + " is outside 1.." + MAX_QUEUES);
        }
        for (int q = 0; q < count; q++) {
            int nameLength = reader.u8("queue.nameLength");
            if (nameLength == 0) {
                throw new MalformedFrameException("queue.nameLength", "empty queue name");
            }
            nameLengths[q] = nameLength;
            nameOffsets[q] = reader.skip(nameLength, "queue.name");
            long last = reader.i64("queue.lastIndex");
            if (last < NOT_OPEN) {
                throw new MalformedFrameException("queue.lastIndex", "negative index " + last);
            }
            lastIndexes[q] = last;
            termCounts[q] = reader.u16("queue.termCount");
            termOffsets[q] = TermHistoryCodec.validate(reader, termCounts[q], "queue.terms");
        }
        reader.expectEnd("body");
        this.buffer = frame.buffer();
        this.queueCount = count;
        return this;
    }

    public int queueCount() {
        return queueCount;
    }

    public String queueName(int q) {
        byte[] name = new byte[nameLengths[q]];
        buffer.getBytes(nameOffsets[q], name);
        return new String(name, StandardCharsets.UTF_8);
    }

    public long lastIndex(int q) {
        return lastIndexes[q];
    }

    public int termCount(int q) {
        return termCounts[q];
    }

    public long term(int q, int i) {
        return buffer.getLong(termOffsets[q] + i * TermHistoryCodec.ENTRY_LENGTH, Frame.ORDER);
    }

    public long previousLastIndex(int q, int i) {
        return buffer.getLong(termOffsets[q] + i * TermHistoryCodec.ENTRY_LENGTH + 8, Frame.ORDER);
    }
}
