package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;
import static io.queueenterprise.protocol.client.WriterClaim.PUBLIC_KEY_LENGTH;
import static io.queueenterprise.protocol.client.WriterClaim.SIGNATURE_LENGTH;

/**
 * CLAIM, client → node (session MAC): this connection writes under a writer epoch ({@link WriterClaim}).
 * <pre>i64 writer epoch, 32 Ed25519 public key (the epoch commits to it), 64 signature over the connection, both
 * handshake nonces and the epoch</pre>
 */
public final class ClaimDecoder extends ClientFrameDecoder {
    private static final int EPOCH = HEADER_LENGTH;
    private static final int PUBLIC_KEY = HEADER_LENGTH + 8;
    private static final int SIGNATURE = PUBLIC_KEY + PUBLIC_KEY_LENGTH;

    public ClaimDecoder() {
        super(ClientFrameType.CLAIM);
    }

    public ClaimDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        return need(at, 8 + PUBLIC_KEY_LENGTH + SIGNATURE_LENGTH, end, "epoch, public key, signature");
    }

    public long epoch() {
        return i64(EPOCH);
    }

    public void publicKey(byte[] dst) {
        bytes(PUBLIC_KEY, dst, PUBLIC_KEY_LENGTH);
    }

    public void signature(byte[] dst) {
        bytes(SIGNATURE, dst, SIGNATURE_LENGTH);
    }
}
