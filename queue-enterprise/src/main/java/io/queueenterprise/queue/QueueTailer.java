package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.wire.ReadMarshallable;

import java.nio.ByteBuffer;

/**
 * Reads excerpts in order. In an encrypted queue each excerpt is opened (and, in the authenticated
 * mode, verified) before any byte of it is returned.
 *
 * <p>A read that fails ({@link ExcerptDecryptionException}, {@link BufferTooSmallException}) does
 * not move the tailer: nothing is skipped silently. {@link #skip()} moves past an excerpt
 * explicitly. Not thread-safe: one tailer per thread. Steady-state reads allocate nothing.
 */
public interface QueueTailer extends AutoCloseable {

    /**
     * Copies the next excerpt's plaintext into {@code dst} at {@code offset}.
     *
     * @return its length, or -1 when there is no excerpt to read yet
     * @throws BufferTooSmallException when it does not fit (the tailer stays on it)
     */
    int read(byte[] dst, int offset, int capacity);

    default int read(byte[] dst) {
        return read(dst, 0, dst.length);
    }

    /** Puts the next excerpt's plaintext into {@code dst} at its position; -1 when none. */
    int read(ByteBuffer dst);

    /** Appends the next excerpt's plaintext to {@code dst}; false when there is none. */
    boolean read(Bytes<?> dst);

    /** Passes the next excerpt, read as a binary Wire document, to {@code reader}; false when none. */
    boolean readDocument(ReadMarshallable reader);

    /** Moves past the next excerpt without reading it; false when there is none. */
    boolean skip();

    /**
     * After a {@link CorruptedQueueException}: moves to the next excerpt that can be read (the first one
     * Chronicle's index reaches beyond the damage) and returns its index, or -1 if there is none. The
     * excerpts in between are lost to readers of this copy; {@code qe verify} lists such ranges. Slow (it
     * probes index by index): a recovery path, not a read path.
     */
    long skipDamaged();

    /** Index of the last excerpt read or skipped; -1 before the first. */
    long lastReadIndex();

    /** Moves so the next read returns the excerpt at {@code index}; false if the queue has no such index. */
    boolean moveToIndex(long index);

    QueueTailer toStart();

    QueueTailer toEnd();

    @Override
    void close();
}
