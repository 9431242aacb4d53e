package io.queueenterprise.protocol.client;

import static io.queueenterprise.protocol.client.ClientProtocol.NONCE_LENGTH;

/** CONNECT, client → node (handshake MAC): see {@link ConnectDecoder}. */
public final class ConnectEncoder extends ClientFrameEncoder<ConnectEncoder> {
    public ConnectEncoder() {
        super(ClientFrameType.CONNECT);
    }

    /** @return the frame length; the sequence of a CONNECT is always 1 */
    public int encode(long connection, byte[] clientNonce, String queue, String replyHost, int replyPort) {
        int at = begin(connection, 1);
        bytes(at, clientNonce, NONCE_LENGTH);
        at = putShortString(at + NONCE_LENGTH, queue, true, "queue name");
        at = putShortString(at, replyHost, false, "reply host");
        u16(at, replyPort);
        return finish(at + 2);
    }
}
