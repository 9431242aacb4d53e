package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;

/**
 * TAIL_OPEN, client → node (session MAC): stream the queue's excerpts from the start, the end, at an index or after
 * one, with initial credit.
 * <pre>u16 queue position, u8 from ({@link TailFrom} code), u8 mode ({@link TailMode} code), i32 credit (&ge; 0),
 * i64 tail id, i64 index (for AT and AFTER)</pre>
 */
public final class TailOpenDecoder extends ClientFrameDecoder {
    private static final int QUEUE = HEADER_LENGTH;
    private static final int FROM = HEADER_LENGTH + 2;
    private static final int MODE = HEADER_LENGTH + 3;
    private static final int CREDIT = HEADER_LENGTH + 4;
    private static final int TAIL = HEADER_LENGTH + 8;
    private static final int INDEX = HEADER_LENGTH + 16;
    private static final int END = HEADER_LENGTH + 24;

    private TailFrom from;
    private TailMode mode;

    public TailOpenDecoder() {
        super(ClientFrameType.TAIL_OPEN);
    }

    public TailOpenDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        at = need(at, END - HEADER_LENGTH, end, "queue, from, mode, credit, tail, index");
        from = TailFrom.of(u8(FROM));
        if (from == null) {
            throw unknown("tail from", u8(FROM));
        }
        mode = TailMode.of(u8(MODE));
        if (mode == null) {
            throw unknown("tail mode", u8(MODE));
        }
        if (credit() < 0) {
            throw malformed("credit", "negative");
        }
        return at;
    }

    /** The queue's position on the node (as CONNECTED named it). */
    public int queue() {
        return u16(QUEUE);
    }

    public TailFrom from() {
        return from;
    }

    public TailMode mode() {
        return mode;
    }

    /** How many excerpts the node may send before the client grants more. */
    public int credit() {
        return i32(CREDIT);
    }

    /** The client's id for this tail; every TAIL_STATUS, TAIL_DATA, TAIL_END of it carries the same. */
    public long tail() {
        return i64(TAIL);
    }

    /** The index for {@link TailFrom#AT} and {@link TailFrom#AFTER}. */
    public long index() {
        return i64(INDEX);
    }
}
