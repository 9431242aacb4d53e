package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.APPEND_ENVELOPE;
import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;

/**
 * APPEND, client → node (session MAC): one sealed (unbound) envelope, with the writer epoch and sequence it carries.
 * <pre>u16 queue position, u16 reserved 0, i64 highest term the client has seen a leader under, i64 writer epoch,
 * i32 writer sequence, i32 envelope length (&ge; 0), 16 write-authorisation tag ({@link WriteTag}), envelope</pre>
 */
public final class AppendDecoder extends ClientFrameDecoder {
    private static final int QUEUE = HEADER_LENGTH;
    private static final int RESERVED = HEADER_LENGTH + 2;
    private static final int TERM = HEADER_LENGTH + 4;
    private static final int EPOCH = HEADER_LENGTH + 12;
    private static final int SEQUENCE = HEADER_LENGTH + 20;
    private static final int LENGTH = HEADER_LENGTH + 24;

    public AppendDecoder() {
        super(ClientFrameType.APPEND);
    }

    public AppendDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        at = need(at, APPEND_ENVELOPE - HEADER_LENGTH, end, "queue, term, epoch, sequence, envelope length, write tag");
        if (u16(RESERVED) != 0) {
            throw malformed("reserved", "not 0");
        }
        if (envelopeLength() < 0) {
            throw malformed("envelope length", "negative");
        }
        return need(at, envelopeLength(), end, "envelope");
    }

    public int queue() {
        return u16(QUEUE);
    }

    /** The highest term the client has seen a leader under. */
    public long clientTerm() {
        return i64(TERM);
    }

    public long epoch() {
        return i64(EPOCH);
    }

    public int writerSequence() {
        return i32(SEQUENCE);
    }

    public int envelopeLength() {
        return i32(LENGTH);
    }

    /** Where the write-authorisation tag lies in {@link #buffer()}. */
    public int writeTagOffset() {
        return offset + ClientProtocol.APPEND_WRITE_TAG;
    }

    /** Where the envelope starts in {@link #buffer()}. */
    public int envelopeOffset() {
        return offset + APPEND_ENVELOPE;
    }
}
