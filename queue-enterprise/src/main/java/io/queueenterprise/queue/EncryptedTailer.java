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
 * Opens each envelope in ONE pass over the mapped file ({@link ExcerptOpener#openFromMemory}): every byte is read
 * once, authenticated and decrypted straight into the caller's array (or a private staging array for the other
 * read forms), and the plaintext written is zeroed if the tag fails. What was checked is therefore what was
 * decrypted, even if another process rewrites the mapped bytes meanwhile, and nothing reaches the caller from an
 * excerpt that fails. An excerpt that is not one contiguous range of the current mapping (it crosses a mapped
 * chunk's end) is copied out once into the staging array instead, verified there and decrypted from that copy.
 */
final class EncryptedTailer extends AbstractTailer {
    private static final int HEADER = Envelope.HEADER_LENGTH;

    private final ExcerptOpener opener;
    private byte[] staging = new byte[1024];
    private Bytes<?> documentBytes;
    private Wire documentWire;
    /** The excerpt {@link #open} left to be opened from the mapped memory (0: it was copied and verified). */
    private long pendingAddress;
    private long pendingIndex;
    private int pendingLength;

    EncryptedTailer(String queueName, ExcerptTailer tailer, LastIndexWatch lastIndexWatch, ExcerptOpener opener,
                    net.openhft.chronicle.core.values.LongValue replicatedReadsGate, WrittenMarks.Reader written) {
        super(queueName, tailer, lastIndexWatch, replicatedReadsGate, written);
        this.opener = opener;
    }

    @Override
    protected int open(long index, Bytes<?> excerpt, int capacity) {
        long envelopeLength = excerpt.readRemaining();
        if (envelopeLength > Integer.MAX_VALUE - 16) {
            throw new CorruptedQueueException(queueName, index, "excerpt length " + envelopeLength + " is impossible", null);
        }
        int length = (int) envelopeLength;
        long position = excerpt.readPosition();
        int plaintextLength = length - opener.mode().overhead();
        long address = plaintextLength >= 0 && plaintextLength <= capacity ? DirectRanges.readable(excerpt, position, length) : 0;
        if (address != 0) {
            // Opened by the copy that follows, in one pass from the mapped memory (held until the read ends). An
            // excerpt too large for the caller is verified below instead, so that damage is reported as damage.
            pendingIndex = index;
            pendingAddress = address;
            pendingLength = length;
            return plaintextLength;
        }
        pendingAddress = 0;
        if (staging.length < length) {
            staging = new byte[Math.max(length, staging.length * 2)];
        }
        excerpt.read(position, staging, 0, length);
        try {
            return opener.verify(index, staging, 0, length);
        } catch (EnvelopeException e) {
            throw new ExcerptDecryptionException(queueName, index, e);
        }
    }

    /** The plaintext of the excerpt {@link #open} found, into {@code dst[offset ..]}. */
    private void decryptTo(byte[] dst, int offset) {
        if (pendingAddress == 0) {
            opener.decryptTo(dst, offset);
            return;
        }
        long address = pendingAddress;
        pendingAddress = 0;
        try {
            opener.openFromMemory(pendingIndex, address, pendingLength, dst, offset);
        } catch (EnvelopeException e) {
            throw new ExcerptDecryptionException(queueName, pendingIndex, e);
        }
    }

    /** The plaintext into the staging array at {@link #HEADER}, for the read forms that copy it on. */
    private void decryptToStaging(int length) {
        if (staging.length < HEADER + length) {
            staging = new byte[Math.max(HEADER + length, staging.length * 2)];
        }
        decryptTo(staging, HEADER);
    }

    @Override
    protected void copyTo(byte[] dst, int offset, int length) {
        decryptTo(dst, offset);
    }

    @Override
    protected void copyTo(ByteBuffer dst, int length) {
        decryptToStaging(length);
        dst.put(staging, HEADER, length);
    }

    @Override
    protected void copyTo(Bytes<?> dst, int length) {
        long target = pendingAddress != 0 ? DirectRanges.writable(dst, length) : 0;
        if (target != 0) { // straight into the caller's direct buffer, in the same one pass
            long address = pendingAddress;
            pendingAddress = 0;
            try {
                opener.openFromMemory(pendingIndex, address, pendingLength, target, length);
            } catch (EnvelopeException e) {
                throw new ExcerptDecryptionException(queueName, pendingIndex, e);
            }
            dst.writeSkip(length);
            return;
        }
        decryptToStaging(length);
        DirectRanges.append(dst, staging, HEADER, length);
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
        decryptToStaging(length);
        documentBytes.write(staging, HEADER, length);
        return documentWire;
    }
}
