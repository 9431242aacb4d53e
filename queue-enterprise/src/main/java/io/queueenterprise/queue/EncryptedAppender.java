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
     * CTR's envelope, sealed straight into this direct buffer and then given to Chronicle's {@code writeBytes}:
     * Chronicle copies a direct source into the mapped file faster than an on-heap one (about 60-80 ns per 40-byte
     * excerpt here, {@code qe ratios}: chronicle-raw against chronicle-raw-heap).
     */
    private Bytes<?> directStaging;
    private Wire documentWire;

    private final StorageGuard.Budget storage;
    private final WrittenMarks.Writer marks;

    EncryptedAppender(String queueName, ExcerptAppender appender, QueueKeys keys, ExcerptSealer sealer,
                      long maxExcerptLength, StorageGuard.Budget storage, WrittenMarks.Writer marks) {
        this.storage = storage;
        this.marks = marks;
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
        admit(length);
        if (!authenticated) {
            return appendDirect(sealer.sealToMemory(src, offset, length, directStagingFor(length)));
        }
        byte[] buf = stagingFor(length);
        return append(buf, sealer.beginSeal(src, offset, length, buf, 0));
    }

    @Override
    public long write(ByteBuffer src) {
        int length = src.remaining();
        admit(length);
        byte[] buf = stagingFor(length);
        src.get(src.position(), buf, HEADER, length); // absolute: the caller's buffer moves only on success
        long index = authenticated ? append(buf, sealer.beginSeal(buf, HEADER, length, buf, 0))
                : appendDirect(sealer.sealToMemory(buf, HEADER, length, directStagingFor(length)));
        src.position(src.position() + length);
        return index;
    }

    @Override
    public long write(BytesStore<?, ?> src) {
        long position = src.readPosition();
        admit(src.readRemaining());
        int length = (int) src.readRemaining();
        long address = authenticated ? 0 : DirectRanges.readable(src, position, length);
        if (address != 0) { // a direct source is sealed from where it lies: no copy onto the heap first
            return appendDirect(sealer.sealToMemory(address, length, directStagingFor(length)));
        }
        byte[] buf = stagingFor(length);
        src.read(position, buf, HEADER, length);
        return authenticated ? append(buf, sealer.beginSeal(buf, HEADER, length, buf, 0))
                : appendDirect(sealer.sealToMemory(buf, HEADER, length, directStagingFor(length)));
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
     * CTR: the envelope sealed into {@link #directStaging} goes through Chronicle's {@code writeBytes}, the same call
     * as the plain path: {@code writingDocument()} costs 50-100 ns more per excerpt (docs/performance.md), and CTR
     * binds no index, so its envelope is complete before the lock.
     */
    private long appendDirect(int envelopeLength) {
        directStaging.clear();
        directStaging.writeSkip(envelopeLength);
        appender.writeBytes(directStaging);
        long index = appender.lastIndexAppended();
        marks.written(index);
        return index;
    }

    /**
     * Authenticated: takes the write lock, binds the index into the tag, copies the envelope into the excerpt with
     * the JDK's copy intrinsic ({@link DirectRanges#append}).
     */
    private long append(byte[] envelope, int envelopeLength) {
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
            DirectRanges.append(dc.wire().bytes(), envelope, 0, envelopeLength);
        } catch (RuntimeException | Error e) {
            sealer.abandonSeal();
            dc.rollbackOnClose();
            throw e;
        } finally {
            dc.close();
        }
        marks.written(index);
        return index;
    }

    /**
     * Before each seal: refuses an excerpt too large or one the file system has no room for (nothing changed), and
     * records a rotated key in the descriptor before it writes its first excerpt.
     */
    private void admit(long plaintextLength) {
        if (plaintextLength > maxPlaintextLength) {
            throw new ExcerptTooLargeException(queueName, plaintextLength, maxPlaintextLength, null);
        }
        storage.spend(queueName, plaintextLength + sealer.mode().overhead());
        keys.prepareToSeal();
    }

    /** The staging array, grown (rarely; never in steady state) to hold the envelope. */
    private byte[] stagingFor(int plaintextLength) {
        int needed = HEADER + plaintextLength + Envelope.TAG_LENGTH;
        if (staging.length < needed) {
            staging = new byte[Math.max(needed, staging.length * 2)];
        }
        return staging;
    }

    /** CTR: {@link #directStaging}, grown (rarely; never in steady state) to hold the envelope; its native address. */
    private long directStagingFor(int plaintextLength) {
        long needed = (long) plaintextLength + sealer.mode().overhead();
        if (directStaging == null || directStaging.realCapacity() < needed) {
            long capacity = Math.max(needed, directStaging == null ? 1024 : 2 * directStaging.realCapacity());
            Bytes<?> grown = Bytes.allocateDirect(capacity);
            if (directStaging != null) {
                directStaging.releaseLast();
            }
            directStaging = grown;
        }
        return directStaging.addressForWrite(0);
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
