package io.queueenterprise.protocol.client;

/** TAIL_END, node → client (session MAC): see {@link TailEndDecoder}. */
public final class TailEndEncoder extends ClientFrameEncoder<TailEndEncoder> {
    public TailEndEncoder() {
        super(ClientFrameType.TAIL_END);
    }

    /** {@code message} is cut to {@link ClientProtocol#MAX_MESSAGE} bytes. */
    public int encode(long connection, long sequence, long tail, ClientRefusal reason, long first, long last, String message) {
        int at = begin(connection, sequence);
        i64(at, tail);
        i32(at + 8, reason.code()); // the reason, then three reserved zero bytes
        i64(at + 12, first);
        i64(at + 20, last);
        return finish(putMessage(at + 28, message));
    }
}
