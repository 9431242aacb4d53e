package io.queueenterprise.replication.wire;

/** Writes an EXCERPT_PART body ({@link ExcerptPartBody}'s layout). Allocation-free. */
public final class ExcerptPartEncoder {
    public FrameEncoder encode(FrameEncoder out, int queue, long quorumIndex, long index, int totalLength, int partOffset,
                               byte[] bytes, int offset, int length) {
        return out.u16(queue).u16(0).i64(quorumIndex).i64(index).i32(totalLength).i32(partOffset).bytes(bytes, offset, length);
    }
}
