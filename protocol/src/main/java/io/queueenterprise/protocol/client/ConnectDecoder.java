package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.EPHEMERAL_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.SIGNATURE_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.NONCE_LENGTH;

/**
 * CONNECT, client → node (handshake MAC): the client's nonce and ephemeral key, the queue it wants, where to answer,
 * and who it is.
 * <pre>32 nonce, 32 ephemeral X25519 key, u8 queue name length (&gt; 0), queue name (UTF-8), u8 reply host length
 * (&gt; 0), reply host (ASCII), u16 reply port (&gt; 0), u8 client name length, client name (ASCII; empty: a client
 * without an identity, taken only by a node that authorises no named clients)</pre>
 */
public final class ConnectDecoder extends ClientFrameDecoder {
    private int nameAt;
    private int nameLength;
    private int hostAt;
    private int hostLength;
    private int portAt;
    private int clientAt;
    private int clientLength;

    public ConnectDecoder() {
        super(ClientFrameType.CONNECT);
    }

    public ConnectDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        at = need(at, NONCE_LENGTH, end, "nonce");
        at = need(at, EPHEMERAL_LENGTH, end, "ephemeral key");
        need(at, 1, end, "queue name length");
        nameLength = u8(at++);
        if (nameLength == 0) {
            throw malformed("queue name", "empty");
        }
        nameAt = at;
        at = need(at, nameLength, end, "queue name");
        need(at, 1, end, "reply host length");
        hostLength = u8(at++);
        if (hostLength == 0) {
            throw malformed("reply host", "empty");
        }
        hostAt = at;
        at = need(at, hostLength, end, "reply host");
        portAt = at;
        at = need(at, 2, end, "reply port");
        if (replyPort() == 0) {
            throw malformed("reply port", "0");
        }
        need(at, 1, end, "client name length");
        clientLength = u8(at++);
        clientAt = at;
        return need(at, clientLength, end, "client name");
    }

    /** Copies the client's nonce ({@link ClientProtocol#NONCE_LENGTH} bytes) into {@code dst}. */
    public void clientNonce(byte[] dst) {
        bytes(HEADER_LENGTH, dst, NONCE_LENGTH);
    }

    /** Copies the client's ephemeral X25519 key ({@link ClientProtocol#EPHEMERAL_LENGTH} bytes) into {@code dst}. */
    public void clientEphemeral(byte[] dst) {
        bytes(HEADER_LENGTH + NONCE_LENGTH, dst, EPHEMERAL_LENGTH);
    }

    /** The client's name; empty for a client without an identity. */
    public String clientName() {
        return ascii(clientAt, clientLength);
    }

    public String queueName() {
        return utf8(nameAt, nameLength);
    }

    public String replyHost() {
        return ascii(hostAt, hostLength);
    }

    public int replyPort() {
        return u16(portAt);
    }
}
