package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.EPHEMERAL_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.SIGNATURE_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.NONCE_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.PROOF_LENGTH;

/**
 * CHALLENGE, node → client (handshake MAC): both nonces, the node's proof and its ephemeral key.
 * <pre>32 client nonce (echoed), 32 node nonce, 32 node proof, 32 node ephemeral X25519 key</pre>
 */
public final class ChallengeDecoder extends ClientFrameDecoder {
    public ChallengeDecoder() {
        super(ClientFrameType.CHALLENGE);
    }

    public ChallengeDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        return need(at, 2 * NONCE_LENGTH + PROOF_LENGTH + EPHEMERAL_LENGTH, end, "nonces, proof and ephemeral key");
    }

    public void clientNonce(byte[] dst) {
        bytes(HEADER_LENGTH, dst, NONCE_LENGTH);
    }

    public void nodeNonce(byte[] dst) {
        bytes(HEADER_LENGTH + NONCE_LENGTH, dst, NONCE_LENGTH);
    }

    public void nodeProof(byte[] dst) {
        bytes(HEADER_LENGTH + 2 * NONCE_LENGTH, dst, PROOF_LENGTH);
    }

    public void nodeEphemeral(byte[] dst) {
        bytes(HEADER_LENGTH + 2 * NONCE_LENGTH + PROOF_LENGTH, dst, EPHEMERAL_LENGTH);
    }
}
