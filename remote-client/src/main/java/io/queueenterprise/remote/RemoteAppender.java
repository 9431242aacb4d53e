package io.queueenterprise.remote;

import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.ExcerptSealer;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.protocol.client.ClientProtocol;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.wire.Wire;
import net.openhft.chronicle.wire.WireType;
import net.openhft.chronicle.wire.WriteMarshallable;

import java.nio.ByteBuffer;

/**
 * Seals each write (unbound envelope: the client never learns the index before sending) straight into the APPEND
 * frame's buffer, tags it with the queue's write key for its key version ({@link io.queueenterprise.protocol.client.WriteTag}),
 * then hands it to the queue's connection, which sends it and waits for the ack. A retry sends the
 * same envelope again, so the leader can recognise it. One thread.
 */
final class RemoteAppender implements QueueAppender {
    private final RemoteQueue queue;
    private final ExcerptSealer sealer;
    private long lastIndex = -1;
    private Bytes<byte[]> documentBytes;
    private Wire documentWire;
    private boolean closed;

    RemoteAppender(RemoteQueue queue, ExcerptSealer sealer) {
        this.queue = queue;
        this.sealer = sealer;
    }

    @Override
    public long write(byte[] src, int offset, int length) {
        java.util.Objects.checkFromIndexSize(offset, length, src.length);
        byte[] frame = prepare(length);
        System.arraycopy(src, offset, frame, ClientProtocol.APPEND_ENVELOPE + Envelope.PAYLOAD_OFFSET, length);
        return send(length);
    }

    @Override
    public long write(ByteBuffer src) {
        int length = src.remaining();
        byte[] frame = prepare(length);
        src.get(src.position(), frame, ClientProtocol.APPEND_ENVELOPE + Envelope.PAYLOAD_OFFSET, length);
        long index = send(length);
        src.position(src.position() + length); // consumed only once appended
        return index;
    }

    @Override
    public long write(BytesStore<?, ?> src) {
        int length = Math.toIntExact(src.readRemaining());
        byte[] frame = prepare(length);
        src.read(src.readPosition(), frame, ClientProtocol.APPEND_ENVELOPE + Envelope.PAYLOAD_OFFSET, length);
        return send(length);
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

    /** The frame buffer with room for the envelope of {@code length} plaintext bytes. */
    private byte[] prepare(int length) {
        if (closed) {
            throw new IllegalStateException("appender of queue '" + queue.name() + "' is closed");
        }
        int needed = ClientProtocol.APPEND_OVERHEAD + Envelope.sealedLength(sealer.mode(), length);
        if (needed > RemoteQueue.TERM_LENGTH / 8) {
            throw new RemoteQueueException(queue.name(), RemoteQueueException.Reason.TOO_LARGE, null, false,
                    "excerpt of " + length + " bytes; a remote write carries at most " + (RemoteQueue.TERM_LENGTH / 8
                    - ClientProtocol.APPEND_OVERHEAD - Envelope.overhead(sealer.mode())) + " bytes", null);
        }
        queue.tx.checkLimit(needed);
        return queue.tx.byteArray();
    }

    private long send(int plaintextLength) {
        byte[] frame = queue.tx.byteArray();
        int envelopeLength = sealer.sealUnbound(frame, ClientProtocol.APPEND_ENVELOPE, plaintextLength);
        // the write tag proves this client holds the queue's master key (the node holds only the derived write key)
        queue.writeTag(Envelope.keyId(frame, ClientProtocol.APPEND_ENVELOPE))
                .sign(frame, ClientProtocol.APPEND_ENVELOPE, envelopeLength, frame, ClientProtocol.APPEND_WRITE_TAG);
        long epoch = Envelope.epoch(frame, ClientProtocol.APPEND_ENVELOPE);
        int sequence = Envelope.sequence(frame, ClientProtocol.APPEND_ENVELOPE);
        try {
            lastIndex = queue.append(epoch, sequence, envelopeLength);
        } catch (RuntimeException e) {
            // the sequence is spent and may be missing from the queue; a node takes only an epoch's next sequence
            sealer.newEpoch();
            throw e;
        }
        return lastIndex;
    }

    @Override
    public long lastIndexAppended() {
        return lastIndex;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            sealer.destroy();
            if (documentBytes != null) {
                documentBytes.releaseLast();
            }
            queue.appenderClosed();
        }
    }
}
