package io.queueenterprise.replication.wire;

/**
 * Writes a DESCRIPTOR body ({@link DescriptorBody}'s layout): {@link #begin} (queue, resume after, the leader's first
 * index, term count), that many {@link #term}s, then {@link #descriptor} (null: none).
 */
public final class DescriptorEncoder {
    private FrameEncoder out;

    public DescriptorEncoder begin(FrameEncoder out, int queue, long resumeAfter, long leaderFirstIndex, int termCount) {
        this.out = out.u16(queue).i64(resumeAfter).i64(leaderFirstIndex).u16(termCount);
        return this;
    }

    public DescriptorEncoder term(long term, long previousLastIndex) {
        out.i64(term).i64(previousLastIndex);
        return this;
    }

    /** The descriptor file's bytes as the leader holds them; null when the queue has none yet. */
    public FrameEncoder descriptor(byte[] bytes) {
        if (bytes == null) {
            return out.i32(0);
        }
        if (bytes.length > DescriptorBody.MAX_DESCRIPTOR) {
            throw new IllegalArgumentException("descriptor of " + bytes.length + " bytes exceeds " + DescriptorBody.MAX_DESCRIPTOR);
        }
        return out.i32(bytes.length).bytes(bytes, 0, bytes.length);
    }
}
