package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.DATA_PIECE;
import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;

/**
 * TAIL_DATA, node → client (session MAC): one excerpt's envelope as stored, or one piece of it, with its index.
 * <pre>i64 tail id, i64 index, i32 the envelope's whole length, i32 this piece's offset in it, i32 piece length, piece</pre>
 */
public final class TailDataDecoder extends ClientFrameDecoder {
    private static final int TAIL = HEADER_LENGTH;
    private static final int INDEX = HEADER_LENGTH + 8;
    private static final int TOTAL = HEADER_LENGTH + 16;
    private static final int PIECE_OFFSET = HEADER_LENGTH + 20;
    private static final int PIECE_LENGTH = HEADER_LENGTH + 24;

    public TailDataDecoder() {
        super(ClientFrameType.TAIL_DATA);
    }

    public TailDataDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        at = need(at, DATA_PIECE - HEADER_LENGTH, end, "tail, index, total, piece offset, piece length");
        int total = total();
        int pieceOffset = pieceOffset();
        int pieceLength = pieceLength();
        if (total < 0 || pieceOffset < 0 || pieceLength < 0 || (long) pieceOffset + pieceLength > total) {
            throw malformed("piece", "[" + pieceOffset + ", +" + pieceLength + ") is not inside an excerpt of " + total + " bytes");
        }
        return need(at, pieceLength, end, "piece");
    }

    public long tail() {
        return i64(TAIL);
    }

    public long index() {
        return i64(INDEX);
    }

    /** The whole envelope's length. */
    public int total() {
        return i32(TOTAL);
    }

    /** Where this piece goes in the envelope. */
    public int pieceOffset() {
        return i32(PIECE_OFFSET);
    }

    public int pieceLength() {
        return i32(PIECE_LENGTH);
    }

    /** Where the piece starts in {@link #buffer()}. */
    public int pieceAt() {
        return offset + DATA_PIECE;
    }
}
