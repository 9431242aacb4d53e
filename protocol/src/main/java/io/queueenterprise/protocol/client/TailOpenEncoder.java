package io.queueenterprise.protocol.client;

/** TAIL_OPEN, client → node (session MAC): see {@link TailOpenDecoder}. Allocation-free. */
public final class TailOpenEncoder extends ClientFrameEncoder<TailOpenEncoder> {
    public TailOpenEncoder() {
        super(ClientFrameType.TAIL_OPEN);
    }

    public int encode(long connection, long sequence, int queue, TailFrom from, TailMode mode, int credit, long tail,
                      long index) {
        int at = begin(connection, sequence);
        u16(at, queue);
        u8(at + 2, from.code());
        u8(at + 3, mode.code());
        i32(at + 4, credit);
        i64(at + 8, tail);
        i64(at + 16, index);
        return finish(at + 24);
    }
}
