package io.queueenterprise.protocol.client;

import static io.queueenterprise.protocol.client.WriterClaim.PUBLIC_KEY_LENGTH;
import static io.queueenterprise.protocol.client.WriterClaim.SIGNATURE_LENGTH;

/** CLAIM, client → node (session MAC): see {@link ClaimDecoder}. */
public final class ClaimEncoder extends ClientFrameEncoder<ClaimEncoder> {
    public ClaimEncoder() {
        super(ClientFrameType.CLAIM);
    }

    public int encode(long connection, long sequence, long epoch, byte[] publicKey, byte[] signature) {
        int at = begin(connection, sequence);
        i64(at, epoch);
        bytes(at + 8, publicKey, PUBLIC_KEY_LENGTH);
        bytes(at + 8 + PUBLIC_KEY_LENGTH, signature, SIGNATURE_LENGTH);
        return finish(at + 8 + PUBLIC_KEY_LENGTH + SIGNATURE_LENGTH);
    }
}
