package io.queueenterprise.protocol.client;

import static io.queueenterprise.protocol.client.ClientProtocol.APPEND_ENVELOPE;
import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;

/** APPEND, client → node (session MAC): see {@link AppendDecoder}. Allocation-free. */
public final class AppendEncoder extends ClientFrameEncoder<AppendEncoder> {
    public AppendEncoder() {
        super(ClientFrameType.APPEND);
    }

    /**
     * An APPEND around an envelope already at {@code buffer[offset + }{@link ClientProtocol#APPEND_ENVELOPE}{@code ..]}
     * and its write tag at {@link ClientProtocol#APPEND_WRITE_TAG}: the caller sealed and tagged it in place.
     */
    public int encodeAround(long connection, long sequence, int queue, long clientTerm, long epoch, int writerSequence,
                            int envelopeLength) {
        int at = begin(connection, sequence);
        u16(at, queue);
        u16(at + 2, 0);
        i64(at + 4, clientTerm);
        i64(at + 12, epoch);
        i32(at + 20, writerSequence);
        i32(at + 24, envelopeLength);
        assert at + 28 + WriteTag.LENGTH == APPEND_ENVELOPE && at == HEADER_LENGTH;
        return finish(APPEND_ENVELOPE + envelopeLength);
    }
}
