package io.queueenterprise.queue;

import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.ExcerptSealer;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.wire.DocumentContext;
import net.openhft.chronicle.wire.Wire;
import net.openhft.chronicle.wire.WireType;
import net.openhft.chronicle.wire.WriteMarshallable;

import java.nio.ByteBuffer;

/**
 * Seals each excerpt before it reaches the mapped file: the plaintext is copied once into a
 * reusable staging array, sealed in place (header, ciphertext, tag) inside Chronicle's write lock,
 * where the excerpt's index is known, and the envelope copied once into the excerpt.
 */
final class EncryptedAppender implements QueueAppender {
    private static final int HEADER = Envelope.HEADER_LENGTH;

    private final String queueName;
    private final ExcerptAppender appender;
    private final ExcerptSealer sealer;
    private byte[] staging = new byte[1024];
    private Bytes<?> documentBytes;
    private Wire documentWire;

    EncryptedAppender(String queueName, ExcerptAppender appender, ExcerptSealer sealer) {
        this.queueName = queueName;
        this.appender = appender;
        this.sealer = sealer;
    }

    @Override
    public long write(byte[] src, int offset, int length) {
        byte[] buf = staging(length);
        System.arraycopy(src, offset, buf, HEADER, length);
        return sealAndAppend(buf, length);
    }

    @Override
    public long write(ByteBuffer src) {
        int length = src.remaining();
        byte[] buf = staging(length);
        src.get(buf, HEADER, length);
        return sealAndAppend(buf, length);
    }

    @Override
    public long write(BytesStore<?, ?> src) {
        byte[] buf = staging(src.readRemaining());
        int length = (int) src.readRemaining();
        src.read(src.readPosition(), buf, HEADER, length);
        return sealAndAppend(buf, length);
    }

    @Override
    public long writeDocument(WriteMarshallable document) {
        if (documentBytes == null) {
            documentBytes = Bytes.allocateElasticOnHeap(256);
            documentWire = WireType.BINARY_LIGHT.apply(documentBytes);
        }
        documentBytes.clear();
        document.writeMarshallable(documentWire);
        return write(documentBytes);
    }

    private long sealAndAppend(byte[] buf, int plaintextLength) {
        DocumentContext dc = appender.writingDocument();
        try {
            // The index is fixed once Chronicle's write lock is held: it is part of the nonce.
            long index = dc.index();
            int envelopeLength = sealer.sealInPlace(index, buf, 0, plaintextLength);
            dc.wire().bytes().write(buf, 0, envelopeLength);
        } catch (RuntimeException | Error e) {
            dc.rollbackOnClose();
            throw e;
        } finally {
            dc.close();
        }
        return appender.lastIndexAppended();
    }

    /** The staging array, grown (rarely; never in steady state) to hold an envelope of this plaintext length. */
    private byte[] staging(long plaintextLength) {
        if (plaintextLength > Envelope.MAX_PLAINTEXT_LENGTH) {
            throw new ExcerptException(queueName, ExcerptException.UNKNOWN_INDEX,
                    "excerpt of " + plaintextLength + " bytes is too large to seal", null);
        }
        int needed = HEADER + (int) plaintextLength + Envelope.TAG_LENGTH;
        if (staging.length < needed) {
            staging = new byte[Math.max(needed, staging.length * 2)];
        }
        return staging;
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
        return "EncryptedAppender[" + queueName + "]";
    }
}
