package io.queueenterprise.protocol.client;

import static io.queueenterprise.protocol.client.ClientProtocol.EPHEMERAL_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.SIGNATURE_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.NONCE_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.PROOF_LENGTH;

/** CHALLENGE, node → client (handshake MAC): see {@link ChallengeDecoder}. */
public final class ChallengeEncoder extends ClientFrameEncoder<ChallengeEncoder> {
    public ChallengeEncoder() {
        super(ClientFrameType.CHALLENGE);
    }

    public int encode(long connection, long sequence, byte[] clientNonce, byte[] nodeNonce, byte[] nodeProof,
                      byte[] nodeEphemeral) {
        int at = begin(connection, sequence);
        bytes(at, clientNonce, NONCE_LENGTH);
        bytes(at + NONCE_LENGTH, nodeNonce, NONCE_LENGTH);
        bytes(at + 2 * NONCE_LENGTH, nodeProof, PROOF_LENGTH);
        bytes(at + 2 * NONCE_LENGTH + PROOF_LENGTH, nodeEphemeral, EPHEMERAL_LENGTH);
        return finish(at + 2 * NONCE_LENGTH + PROOF_LENGTH + EPHEMERAL_LENGTH);
    }
}
