package io.queueenterprise.protocol.client;

/** TAIL_STATUS, node → client (session MAC): see {@link TailStatusDecoder}. Allocation-free. */
public final class TailStatusEncoder extends ClientFrameEncoder<TailStatusEncoder> {
    public TailStatusEncoder() {
        super(ClientFrameType.TAIL_STATUS);
    }

    public int encode(long connection, long sequence, long tail, TailStatusKind kind, long after, long first, long last,
                      long quorum) {
        int at = begin(connection, sequence);
        i64(at, tail);
        i32(at + 8, kind.code()); // the kind, then three reserved zero bytes
        i64(at + 12, after);
        i64(at + 20, first);
        i64(at + 28, last);
        i64(at + 36, quorum);
        return finish(at + 44);
    }
}
