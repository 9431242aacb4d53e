package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;

/**
 * TAIL_CREDIT, client → node (session MAC): the client took excerpts; the node may send this many more (0: a
 * keep-alive).
 * <pre>i64 tail id, i32 grant (&ge; 0)</pre>
 */
public final class TailCreditDecoder extends ClientFrameDecoder {
    private static final int TAIL = HEADER_LENGTH;
    private static final int GRANT = HEADER_LENGTH + 8;
    private static final int END = HEADER_LENGTH + 12;

    public TailCreditDecoder() {
        super(ClientFrameType.TAIL_CREDIT);
    }

    public TailCreditDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        at = need(at, END - HEADER_LENGTH, end, "tail, grant");
        if (grant() < 0) {
            throw malformed("grant", "negative");
        }
        return at;
    }

    public long tail() {
        return i64(TAIL);
    }

    public int grant() {
        return i32(GRANT);
    }
}
