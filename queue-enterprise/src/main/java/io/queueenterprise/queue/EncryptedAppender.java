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
 * Seals each excerpt before it reaches the mapped file. Everything that does not need the index happens
 * before Chronicle's write lock is taken (key refresh after a rotation, AES, encryption straight from the
 * caller's array into a reusable staging array, Poly1305 over the ciphertext); inside the lock only
 * the index is bound into the tag and the envelope copied once into the excerpt. Other writers, in this
 * process or another, wait only for that.
 */
final class EncryptedAppender implements QueueAppender {
    private static final int HEADER = Envelope.HEADER_LENGTH;

    private final String queueName;
    private final ExcerptAppender appender;
    private final ExcerptSealer sealer;
    private final QueueKeys keys;
    /** The largest plaintext: Chronicle's largest excerpt less the envelope's overhead. */
    private final long maxPlaintextLength;
    private byte[] staging = new byte[1024];
    private final boolean authenticated;
    private Bytes<?> documentBytes;
    /**
     * CTR's finished envelope, copied off-heap before Chronicle's {@code writeBytes}: Chronicle copies a direct
     * source into the mapped file faster than an on-heap one (about 60-80 ns per 40-byte excerpt here,
     * {@code qe ratios}: chronicle-raw against chronicle-raw-heap), more than the extra copy costs.
     */
    private Bytes<?> directStaging;
    private Wire documentWire;

    private final StorageGuard.Budget storage;

    EncryptedAppender(String queueName, ExcerptAppender appender, QueueKeys keys, ExcerptSealer sealer,
                      long maxExcerptLength, StorageGuard.Budget storage) {
        this.storage = storage;
        this.queueName = queueName;
        this.appender = appender;
        this.keys = keys;
        this.sealer = sealer;
        this.authenticated = sealer.mode().authenticated();
        this.maxPlaintextLength = Math.min(Envelope.MAX_PLAINTEXT_LENGTH, maxExcerptLength - sealer.mode().overhead());
    }

    @Override
    public long write(byte[] src, int offset, int length) {
        java.util.Objects.checkFromIndexSize(offset, length, src.length);
        byte[] buf = prepare(length);
        int envelopeLength = sealer.beginSeal(src, offset, length, buf, 0);
        return append(buf, envelopeLength);
    }

    @Override
    public long write(ByteBuffer src) {
        int length = src.remaining();
        byte[] buf = prepare(length);
        src.get(src.position(), buf, HEADER, length); // absolute: the caller's buffer moves only on success
        int envelopeLength = sealer.beginSeal(buf, HEADER, length, buf, 0);
        long index = append(buf, envelopeLength);
        src.position(src.position() + length);
        return index;
    }

    @Override
    public long write(BytesStore<?, ?> src) {
        byte[] buf = prepare(src.readRemaining());
        int length = (int) src.readRemaining();
        src.read(src.readPosition(), buf, HEADER, length);
        int envelopeLength = sealer.beginSeal(buf, HEADER, length, buf, 0);
        return append(buf, envelopeLength);
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

    /**
     * Takes the write lock, binds the index into the tag, copies the envelope into the excerpt. CTR binds no
     * index, so its envelope is complete before the lock and goes through Chronicle's {@code writeBytes}, the
     * same call as the plain path: {@code writingDocument()} costs 50-100 ns more per excerpt (docs/performance.md).
     */
    private long append(byte[] envelope, int envelopeLength) {
        if (!authenticated) {
            sealer.completeSeal(0L); // binds nothing in CTR mode: only ends the seal
            if (directStaging == null) {
                directStaging = Bytes.allocateElasticDirect(Math.max(1024, envelopeLength));
            }
            directStaging.clear();
            HeapToNative.append(directStaging, envelope, 0, envelopeLength);
            appender.writeBytes(directStaging);
            return appender.lastIndexAppended();
        }
        DocumentContext dc;
        try {
            dc = appender.writingDocument();
        } catch (RuntimeException | Error e) {
            sealer.abandonSeal();
            throw e;
        }
        long index;
        try {
            // The index is fixed once Chronicle's write lock is held: it is bound into the tag.
            index = dc.index();
            sealer.completeSeal(index);
            HeapToNative.append(dc.wire().bytes(), envelope, 0, envelopeLength);
        } catch (RuntimeException | Error e) {
            sealer.abandonSeal();
            dc.rollbackOnClose();
            throw e;
        } finally {
            dc.close();
        }
        return index;
    }

    /**
     * Before each seal: refuses an excerpt too large or one the file system has no room for (nothing changed), records a rotated key in the descriptor
     * before it writes its first excerpt, and returns the staging array, grown (rarely; never in steady state)
     * to hold the envelope.
     */
    private byte[] prepare(long plaintextLength) {
        if (plaintextLength > maxPlaintextLength) {
            throw new ExcerptTooLargeException(queueName, plaintextLength, maxPlaintextLength, null);
        }
        storage.spend(queueName, plaintextLength + sealer.mode().overhead());
        keys.prepareToSeal();
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
        sealer.destroy();
        appender.close();
        if (directStaging != null) {
            directStaging.releaseLast(); // native memory; it only ever held ciphertext
            directStaging = null;
        }
    }

    @Override
    public String toString() {
        return "EncryptedAppender[" + queueName + "]";
    }
}
