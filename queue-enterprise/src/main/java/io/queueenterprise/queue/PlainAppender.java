package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.wire.DocumentContext;
import net.openhft.chronicle.wire.WriteMarshallable;

import java.nio.ByteBuffer;

/** Writes excerpts exactly as open-source Chronicle does; the library adds one call, nothing else. */
final class PlainAppender implements QueueAppender {
    private final String queueName;
    private final ExcerptAppender appender;

    PlainAppender(String queueName, ExcerptAppender appender) {
        this.queueName = queueName;
        this.appender = appender;
    }

    @Override
    public long write(byte[] src, int offset, int length) {
        try (DocumentContext dc = appender.writingDocument()) {
            dc.wire().bytes().write(src, offset, length);
        }
        return appender.lastIndexAppended();
    }

    @Override
    public long write(ByteBuffer src) {
        try (DocumentContext dc = appender.writingDocument()) {
            dc.wire().bytes().writeSome(src);
        }
        return appender.lastIndexAppended();
    }

    @Override
    public long write(BytesStore<?, ?> src) {
        appender.writeBytes(src);
        return appender.lastIndexAppended();
    }

    @Override
    public long writeDocument(WriteMarshallable document) {
        appender.writeDocument(document);
        return appender.lastIndexAppended();
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
