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
    /** Chronicle's padding code: what an empty document is stored as (BinaryWireCode.PADDING). */
    static final byte EMPTY_MARK = (byte) 0x8F;
    private final String queueName;
    private final ExcerptAppender appender;
    private final long maxExcerptLength;
    private final StorageGuard.Budget storage;
    private final WrittenMarks.Writer marks;

    PlainAppender(String queueName, ExcerptAppender appender, long maxExcerptLength, StorageGuard.Budget storage,
                  WrittenMarks.Writer marks) {
        this.queueName = queueName;
        this.marks = marks;
        this.appender = appender;
        this.maxExcerptLength = maxExcerptLength;
        this.storage = storage;
    }

    @Override
    public long write(byte[] src, int offset, int length) {
        java.util.Objects.checkFromIndexSize(offset, length, src.length);
        checkLength(length);
        if (length == 0) {
            return writeEmpty();
        }
        checkRepresentable(src[offset], length);
        long index;
        try (DocumentContext dc = appender.writingDocument()) {
            dc.wire().bytes().write(src, offset, length);
            index = dc.index();
        }
        marks.written(index);
        return index;
    }

    @Override
    public long write(ByteBuffer src) {
        int length = src.remaining();
        checkLength(length);
        if (length == 0) {
            return writeEmpty();
        }
        checkRepresentable(src.get(src.position()), length);
        int position = src.position();
        long index;
        DocumentContext dc = appender.writingDocument();
        try {
            Bytes<?> bytes = dc.wire().bytes();
            bytes.writeSome(src);
            if (src.hasRemaining()) { // cannot happen below the checked limit; never commit a truncated excerpt
                throw new ExcerptTooLargeException(queueName, length, maxExcerptLength, null);
            }
            index = dc.index();
        } catch (RuntimeException | Error e) {
            dc.rollbackOnClose();
            src.position(position);
            throw e;
        } finally {
            dc.close();
        }
        marks.written(index);
        return index;
    }

    @Override
    public long write(BytesStore<?, ?> src) {
        long length = src.readRemaining();
        checkLength(length);
        if (length == 0) {
            return writeEmpty();
        }
        checkRepresentable(src.readByte(src.readPosition()), length);
        appender.writeBytes(src);
        long index = appender.lastIndexAppended();
        marks.written(index);
        return index;
    }

    /**
     * An empty message. Chronicle cannot store an excerpt of length 0 (a zero header word means "nothing written
     * here yet"), so an empty document is stored as its one padding byte, which every reader of this library, and
     * Chronicle's own Wire readers, take as empty ({@link PlainTailer}).
     */
    private long writeEmpty() {
        long index;
        try (DocumentContext dc = appender.writingDocument()) {
            index = dc.index();
        }
        marks.written(index);
        return index;
    }

    /**
     * The one message Chronicle's format cannot tell from an empty one: the single byte {@link #EMPTY_MARK}. It is
     * refused, writing nothing, rather than read back as empty.
     */
    private void checkRepresentable(byte first, long length) {
        if (length == 1 && first == EMPTY_MARK) {
            throw new ExcerptException(queueName, ExcerptException.UNKNOWN_INDEX, "a plain queue cannot store the"
                    + " one-byte message 0x8F: Chronicle stores an empty message as exactly that byte (its padding code),"
                    + " so it would read back as empty; an encrypted queue stores it", null);
        }
    }

    @Override
    public long writeDocument(WriteMarshallable document) {
        storage.spend(queueName, 0); // its length is known only once written: the reserve covers one excerpt
        long index;
        DocumentContext dc = appender.writingDocument();
        try {
            document.writeMarshallable(dc.wire());
            index = dc.index();
        } catch (RuntimeException e) {
            dc.rollbackOnClose();
            if (e instanceof java.nio.BufferOverflowException) {
                throw new ExcerptTooLargeException(queueName, -1, maxExcerptLength, e);
            }
            throw e;
        } finally {
            dc.close();
        }
        marks.written(index);
        return index;
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
