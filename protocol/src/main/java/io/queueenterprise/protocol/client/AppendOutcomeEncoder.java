package io.queueenterprise.protocol.client;

/** The body APPEND_ACK and APPEND_PENDING share: see {@link AppendOutcomeDecoder}. Allocation-free. */
public abstract class AppendOutcomeEncoder<E extends AppendOutcomeEncoder<E>> extends ClientFrameEncoder<E> {
    AppendOutcomeEncoder(ClientFrameType encodes) {
        super(encodes);
    }

    public final int encode(long connection, long sequence, long epoch, int writerSequence, long index, long term) {
        int at = begin(connection, sequence);
        i64(at, epoch);
        i32(at + 8, writerSequence);
        i64(at + 12, index);
        i64(at + 20, term);
        return finish(at + 28);
    }
}
