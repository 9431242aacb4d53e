package io.queueenterprise.replication.wire;

import java.nio.charset.StandardCharsets;

/**
 * Writes a HELLO body ({@link HelloBody}'s layout): {@link #begin} with the queue count, then per queue
 * {@link #queue} (name, last index, term count) followed by that many {@link #term}s. Names are the configuration's
 * and are encoded once each.
 */
public final class HelloEncoder {
    private FrameEncoder out;

    public HelloEncoder begin(FrameEncoder out, int queueCount) {
        if (queueCount < 1 || queueCount > HelloBody.MAX_QUEUES) {
            throw new IllegalArgumentException("queue count " + queueCount + " is outside 1.." + HelloBody.MAX_QUEUES);
        }
        this.out = out.u16(queueCount);
        return this;
    }

    /** {@code lastIndex}: -1 empty, {@link HelloBody#NOT_OPEN} not open yet. */
    public HelloEncoder queue(String name, long lastIndex, int termCount) {
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        if (bytes.length < 1 || bytes.length > 255) {
            throw new IllegalArgumentException("queue name of " + bytes.length + " bytes (UTF-8) is outside 1..255");
        }
        out.u8(bytes.length).bytes(bytes, 0, bytes.length).i64(lastIndex).u16(termCount);
        return this;
    }

    /** One term history entry of the current queue: the term and the last index before it. */
    public HelloEncoder term(long term, long previousLastIndex) {
        out.i64(term).i64(previousLastIndex);
        return this;
    }
}
