package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.wire.WriteMarshallable;

import java.nio.ByteBuffer;

/**
 * Appends excerpts to a queue; each write is one excerpt and returns its index. In an encrypted
 * queue the excerpt is sealed before it reaches the mapped file.
 *
 * <p>Not thread-safe: one appender per thread. Steady-state writes allocate nothing.
 */
public interface QueueAppender extends AutoCloseable {

    /** Writes {@code src[offset, offset + length)} as one excerpt; returns its index. */
    long write(byte[] src, int offset, int length);

    default long write(byte[] src) {
        return write(src, 0, src.length);
    }

    /** Writes the buffer's remaining bytes as one excerpt and consumes them (position = limit). */
    long write(ByteBuffer src);

    /** Writes the store's readable bytes ({@code readPosition} .. {@code readLimit}); the store is not changed. */
    long write(BytesStore<?, ?> src);

    /** Writes a Chronicle Wire document (binary wire) as one excerpt. */
    long writeDocument(WriteMarshallable document);

    /** Index of the last excerpt this appender wrote; -1 before its first. */
    long lastIndexAppended();

    @Override
    void close();
}
