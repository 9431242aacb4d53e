package io.queueenterprise.protocol.client;

/** TAIL_CREDIT, client → node (session MAC): see {@link TailCreditDecoder}. Allocation-free. */
public final class TailCreditEncoder extends ClientFrameEncoder<TailCreditEncoder> {
    public TailCreditEncoder() {
        super(ClientFrameType.TAIL_CREDIT);
    }

    public int encode(long connection, long sequence, long tail, int grant) {
        int at = begin(connection, sequence);
        i64(at, tail);
        i32(at + 8, grant);
        return finish(at + 12);
    }
}
