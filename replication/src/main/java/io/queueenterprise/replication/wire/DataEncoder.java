package io.queueenterprise.replication.wire;

/**
 * Writes a DATA body ({@link DataBody}'s layout): {@link #begin} (queue, quorum index), {@link #excerpt} per excerpt
 * in increasing index order, then {@link #count()}; the count field is filled as excerpts are added. Allocation-free.
 */
public final class DataEncoder {
    private FrameEncoder out;
    private int countAt;
    private int count;

    public DataEncoder begin(FrameEncoder out, int queue, long quorumIndex) {
        this.out = out.u16(queue).u16(0);
        this.countAt = out.position();
        this.count = 0;
        out.i32(0).i64(quorumIndex);
        return this;
    }

    /** Bytes one excerpt of {@code length} adds to the body. */
    public static int excerptSize(int length) {
        return DataBody.EXCERPT_HEADER_LENGTH + length;
    }

    public DataEncoder excerpt(long index, byte[] bytes, int offset, int length) {
        if (count == DataBody.MAX_COUNT) {
            throw new IllegalStateException("a batch holds at most " + DataBody.MAX_COUNT + " excerpts");
        }
        out.i64(index).i32(length).bytes(bytes, offset, length);
        out.putI32At(countAt, ++count);
        return this;
    }

    /** Excerpts written so far. */
    public int count() {
        return count;
    }
}
