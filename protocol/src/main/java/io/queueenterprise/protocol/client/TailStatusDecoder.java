package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;

/**
 * TAIL_STATUS, node → client (session MAC): the tail is open (where it continues), or still alive (a heartbeat while
 * nothing is sent).
 * <pre>i64 tail id, u8 kind ({@link TailStatusKind} code), 3 reserved 0, i64 after, i64 first, i64 last, i64 quorum</pre>
 */
public final class TailStatusDecoder extends ClientFrameDecoder {
    private static final int TAIL = HEADER_LENGTH;
    private static final int KIND = HEADER_LENGTH + 8;
    private static final int AFTER = HEADER_LENGTH + 12;
    private static final int FIRST = HEADER_LENGTH + 20;
    private static final int LAST = HEADER_LENGTH + 28;
    private static final int QUORUM = HEADER_LENGTH + 36;
    private static final int END = HEADER_LENGTH + 44;

    private TailStatusKind kind;

    public TailStatusDecoder() {
        super(ClientFrameType.TAIL_STATUS);
    }

    public TailStatusDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        at = need(at, END - HEADER_LENGTH, end, "tail, kind, after, first, last, quorum");
        kind = TailStatusKind.of(u8(KIND));
        if (kind == null) {
            throw unknown("tail status kind", u8(KIND));
        }
        if ((u8(KIND + 1) | u16(KIND + 2)) != 0) {
            throw malformed("reserved", "not 0");
        }
        return at;
    }

    public long tail() {
        return i64(TAIL);
    }

    public TailStatusKind kind() {
        return kind;
    }

    /** The index the tail continues after (-1: from the node's first excerpt). */
    public long after() {
        return i64(AFTER);
    }

    /** The first index the node holds (-1: none). */
    public long first() {
        return i64(FIRST);
    }

    /** The last index the node holds (-1: none). */
    public long last() {
        return i64(LAST);
    }

    /** The highest index a majority holds, as this node knows (-1: none). */
    public long quorum() {
        return i64(QUORUM);
    }
}
