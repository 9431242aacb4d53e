package io.queueenterprise.protocol.client;

/** REFUSED, node → client (session MAC, or handshake MAC before a session): see {@link RefusedDecoder}. */
public final class RefusedEncoder extends ClientFrameEncoder<RefusedEncoder> {
    public RefusedEncoder() {
        super(ClientFrameType.REFUSED);
    }

    /** {@code message} is cut to {@link ClientProtocol#MAX_MESSAGE} bytes. */
    public int encode(long connection, long sequence, ClientRefusal reason, long epoch, int writerSequence, long term,
                      String leaderHost, int leaderPort, String message) {
        int at = begin(connection, sequence);
        u8(at, reason.code());
        u8(at + 1, 0);
        u16(at + 2, leaderPort);
        i64(at + 4, epoch);
        i32(at + 12, writerSequence);
        i64(at + 16, term);
        at = putShortString(at + 24, leaderHost, false, "leader host");
        return finish(putMessage(at, message));
    }
}
