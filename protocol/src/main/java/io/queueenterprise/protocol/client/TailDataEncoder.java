package io.queueenterprise.protocol.client;

import static io.queueenterprise.protocol.client.ClientProtocol.DATA_PIECE;

/** TAIL_DATA, node → client (session MAC): see {@link TailDataDecoder}. Allocation-free. */
public final class TailDataEncoder extends ClientFrameEncoder<TailDataEncoder> {
    public TailDataEncoder() {
        super(ClientFrameType.TAIL_DATA);
    }

    /**
     * A TAIL_DATA around a piece already at {@code buffer[offset + }{@link ClientProtocol#DATA_PIECE}{@code ..]}: the
     * caller copied it there.
     */
    public int encodeAround(long connection, long sequence, long tail, long index, int total, int pieceOffset,
                            int pieceLength) {
        int at = begin(connection, sequence);
        i64(at, tail);
        i64(at + 8, index);
        i32(at + 16, total);
        i32(at + 20, pieceOffset);
        i32(at + 24, pieceLength);
        return finish(DATA_PIECE + pieceLength);
    }
}
