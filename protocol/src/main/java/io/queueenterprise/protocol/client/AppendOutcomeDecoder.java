package io.queueenterprise.protocol.client;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;

/**
 * The body APPEND_ACK and APPEND_PENDING share: which write (epoch, sequence) is at which index, under which term.
 * <pre>i64 writer epoch, i32 writer sequence, i64 index, i64 the node's term</pre>
 */
public abstract class AppendOutcomeDecoder extends ClientFrameDecoder {
    private static final int EPOCH = HEADER_LENGTH;
    private static final int SEQUENCE = HEADER_LENGTH + 8;
    private static final int INDEX = HEADER_LENGTH + 12;
    private static final int TERM = HEADER_LENGTH + 20;
    private static final int END = HEADER_LENGTH + 28;

    AppendOutcomeDecoder(ClientFrameType decodes) {
        super(decodes);
    }

    @Override
    final int checkBody(int at, int end) throws MalformedClientFrameException {
        return need(at, END - HEADER_LENGTH, end, "epoch, sequence, index, term");
    }

    public final long epoch() {
        return i64(EPOCH);
    }

    public final int writerSequence() {
        return i32(SEQUENCE);
    }

    public final long index() {
        return i64(INDEX);
    }

    public final long term() {
        return i64(TERM);
    }
}
