package io.queueenterprise.queue;

import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.EnvelopeException;
import io.queueenterprise.crypto.ExcerptOpener;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;
import net.openhft.chronicle.wire.Wire;
import net.openhft.chronicle.wire.WireType;

import java.nio.ByteBuffer;

/**
 * Copies each envelope once out of the mapped file into a private staging array, verifies that copy
 * (authenticated mode), then decrypts the same copy straight into the caller's array: what was checked is
 * what is decrypted, even if another process rewrites the mapped bytes meanwhile, and nothing reaches the
 * caller from an excerpt that fails.
 */
final class EncryptedTailer extends AbstractTailer {
    private static final int HEADER = Envelope.HEADER_LENGTH;

    private final ExcerptOpener opener;
    private byte[] staging = new byte[1024];
    private Bytes<?> documentBytes;
    private Wire documentWire;

    EncryptedTailer(String queueName, ExcerptTailer tailer, LastIndexWatch lastIndexWatch, ExcerptOpener opener,
                    net.openhft.chronicle.core.values.LongValue replicatedReadsGate) {
        super(queueName, tailer, lastIndexWatch, replicatedReadsGate);
        this.opener = opener;
    }

    @Override
    protected int open(long index, Bytes<?> excerpt) {
        long envelopeLength = excerpt.readRemaining();
        if (envelopeLength > Integer.MAX_VALUE - 16) {
            throw new CorruptedQueueException(queueName, index, "excerpt length " + envelopeLength + " is impossible", null);
        }
        int length = (int) envelopeLength;
        if (staging.length < length) {
            staging = new byte[Math.max(length, staging.length * 2)];
        }
        excerpt.read(excerpt.readPosition(), staging, 0, length);
        try {
            return opener.verify(index, staging, 0, length);
        } catch (EnvelopeException e) {
            throw new ExcerptDecryptionException(queueName, index, e);
        }
    }

    @Override
    protected void copyTo(byte[] dst, int offset, int length) {
        opener.decryptTo(dst, offset);
    }

    @Override
    protected void copyTo(ByteBuffer dst, int length) {
        opener.decryptTo(staging, HEADER);
        dst.put(staging, HEADER, length);
    }

    @Override
    protected void copyTo(Bytes<?> dst, int length) {
        opener.decryptTo(staging, HEADER);
        HeapToNative.append(dst, staging, HEADER, length);
    }

    @Override
    protected void moved() {
        opener.forgetWriterOrder();
    }

    @Override
    public void close() {
        opener.destroy();
        super.close();
    }

    @Override
    protected Wire documentWire(DocumentContext dc, int length) {
        if (documentBytes == null) {
            documentBytes = Bytes.allocateElasticOnHeap(Math.max(256, length));
            documentWire = WireType.BINARY_LIGHT.apply(documentBytes);
        }
        documentBytes.clear();
        opener.decryptTo(staging, HEADER);
        documentBytes.write(staging, HEADER, length);
        return documentWire;
    }
}
