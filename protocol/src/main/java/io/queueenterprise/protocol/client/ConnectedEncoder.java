package io.queueenterprise.protocol.client;

/** CONNECTED, node → client (session MAC): see {@link ConnectedDecoder}. */
public final class ConnectedEncoder extends ClientFrameEncoder<ConnectedEncoder> {
    public ConnectedEncoder() {
        super(ClientFrameType.CONNECTED);
    }

    public int encode(long connection, long sequence, long term, boolean leads, ClientAckMode ackMode, int queue,
                      int maxEnvelope, String leaderHost, int leaderPort, byte[] descriptor) {
        if (descriptor.length > ClientProtocol.MAX_DESCRIPTOR) {
            throw new IllegalArgumentException("CONNECTED descriptor: " + descriptor.length + " bytes, more than "
                    + ClientProtocol.MAX_DESCRIPTOR);
        }
        int at = begin(connection, sequence);
        i64(at, term);
        u8(at + 8, leads ? 1 : 0);
        u8(at + 9, ackMode.code());
        u16(at + 10, queue);
        i32(at + 12, maxEnvelope);
        at = putShortString(at + 16, leaderHost, false, "leader host");
        u16(at, leaderPort);
        i32(at + 2, descriptor.length);
        bytes(at + 6, descriptor, descriptor.length);
        return finish(at + 6 + descriptor.length);
    }
}
