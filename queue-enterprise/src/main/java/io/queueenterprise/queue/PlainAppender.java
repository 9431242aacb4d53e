package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.wire.DocumentContext;
import net.openhft.chronicle.wire.WriteMarshallable;

import java.nio.ByteBuffer;

/**
 * Appends excerpts as they are: an ordinary Chronicle Queue that open-source Chronicle reads. Every
 * write form writes the whole excerpt or throws and writes nothing.
 */
final class PlainAppender implements QueueAppender {
    private final String queueName;
    private final ExcerptAppender appender;
    private final long maxExcerptLength;
    private final StorageGuard.Budget storage;

    PlainAppender(String queueName, ExcerptAppender appender, long maxExcerptLength, StorageGuard.Budget storage) {
        this.queueName = queueName;
        this.appender = appender;
        this.maxExcerptLength = maxExcerptLength;
        this.storage = storage;
    }

    @Override
    public long write(byte[] src, int offset, int length) {
        java.util.Objects.checkFromIndexSize(offset, length, src.length);
        checkLength(length);
        try (DocumentContext dc = appender.writingDocument()) {
            dc.wire().bytes().write(src, offset, length);
            return dc.index();
        }
    }

    @Override
    public long write(ByteBuffer src) {
        int length = src.remaining();
        checkLength(length);
        int position = src.position();
        DocumentContext dc = appender.writingDocument();
        try {
            Bytes<?> bytes = dc.wire().bytes();
            bytes.writeSome(src);
            if (src.hasRemaining()) { // cannot happen below the checked limit; never commit a truncated excerpt
                throw new ExcerptTooLargeException(queueName, length, maxExcerptLength, null);
            }
            return dc.index();
        } catch (RuntimeException | Error e) {
            dc.rollbackOnClose();
            src.position(position);
            throw e;
        } finally {
            dc.close();
        }
    }

    @Override
    public long write(BytesStore<?, ?> src) {
        checkLength(src.readRemaining());
        appender.writeBytes(src);
        return appender.lastIndexAppended();
    }

    @Override
    public long writeDocument(WriteMarshallable document) {
        storage.spend(queueName, 0); // its length is known only once written: the reserve covers one excerpt
        DocumentContext dc = appender.writingDocument();
        try {
            document.writeMarshallable(dc.wire());
            return dc.index();
        } catch (RuntimeException e) {
            dc.rollbackOnClose();
            if (e instanceof java.nio.BufferOverflowException) {
                throw new ExcerptTooLargeException(queueName, -1, maxExcerptLength, e);
            }
            throw e;
        } finally {
            dc.close();
        }
    }

    /** Refuses, writing nothing, an excerpt too large or one the file system has no room for. */
    private void checkLength(long length) {
        if (length > maxExcerptLength) {
            throw new ExcerptTooLargeException(queueName, length, maxExcerptLength, null);
        }
        storage.spend(queueName, length);
    }

    @Override
    public long lastIndexAppended() {
        return appender.lastIndexAppended();
    }

    @Override
    public void close() {
        appender.close();
    }

    @Override
    public String toString() {
        return "PlainAppender[" + queueName + "]";
    }
}
