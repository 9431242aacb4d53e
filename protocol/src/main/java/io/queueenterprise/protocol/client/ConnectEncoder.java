package io.queueenterprise.protocol.client;

import static io.queueenterprise.protocol.client.ClientProtocol.EPHEMERAL_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.SIGNATURE_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.NONCE_LENGTH;

/** CONNECT, client → node (handshake MAC): see {@link ConnectDecoder}. */
public final class ConnectEncoder extends ClientFrameEncoder<ConnectEncoder> {
    public ConnectEncoder() {
        super(ClientFrameType.CONNECT);
    }

    /** @return the frame length; the sequence of a CONNECT is always 1 */
    public int encode(long connection, byte[] clientNonce, byte[] clientEphemeral, String queue, String replyHost, int replyPort,
                      String clientName) {
        int at = begin(connection, 1);
        bytes(at, clientNonce, NONCE_LENGTH);
        bytes(at + NONCE_LENGTH, clientEphemeral, EPHEMERAL_LENGTH);
        at = putShortString(at + NONCE_LENGTH + EPHEMERAL_LENGTH, queue, true, "queue name");
        at = putShortString(at, replyHost, false, "reply host");
        u16(at, replyPort);
        at = putShortString(at + 2, clientName, false, "client name");
        return finish(at);
    }
}
