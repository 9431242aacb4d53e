package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;
import net.openhft.chronicle.wire.Wire;

import java.nio.ByteBuffer;

/** Reads excerpts as stored: straight from the mapped file, no copy beyond the caller's. */
final class PlainTailer extends AbstractTailer {
    private Bytes<?> excerpt;

    PlainTailer(String queueName, ExcerptTailer tailer, LastIndexWatch lastIndexWatch, net.openhft.chronicle.core.values.LongValue replicatedReadsGate,
                WrittenMarks.Reader written) {
        super(queueName, tailer, lastIndexWatch, replicatedReadsGate, written);
    }

    @Override
    protected int open(long index, Bytes<?> excerpt, int capacity) {
        long length = excerpt.readRemaining();
        if (length > Integer.MAX_VALUE) {
            throw new CorruptedQueueException(queueName, index, "excerpt length " + length + " is impossible", null);
        }
        this.excerpt = excerpt;
        if (length == 1 && excerpt.readByte(excerpt.readPosition()) == PlainAppender.EMPTY_MARK) {
            excerpt.readSkip(1); // an empty message, as Chronicle stores one (PlainAppender.writeEmpty)
            return 0;
        }
        return (int) length;
    }

    @Override
    protected void copyTo(byte[] dst, int offset, int length) {
        excerpt.read(dst, offset, length);
    }

    @Override
    protected void copyTo(ByteBuffer dst, int length) {
        excerpt.read(dst);
    }

    @Override
    protected void copyTo(Bytes<?> dst, int length) {
        dst.write(excerpt, excerpt.readPosition(), length);
    }

    @Override
    protected Wire documentWire(DocumentContext dc, int length) {
        // No context: an excerpt read past a damaged header (CycleResync), a view of its own bytes.
        return dc != null ? dc.wire() : net.openhft.chronicle.wire.WireType.BINARY_LIGHT.apply(excerpt);
    }
}
