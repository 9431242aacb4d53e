package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.EPHEMERAL_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.SIGNATURE_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.PROOF_LENGTH;

/**
 * PROOF, client → node (handshake MAC): the client's proof under the credential and its identity's signature.
 * <pre>32 client proof, 64 Ed25519 signature of the transcript (zeros: no identity)</pre>
 */
public final class ProofDecoder extends ClientFrameDecoder {
    public ProofDecoder() {
        super(ClientFrameType.PROOF);
    }

    public ProofDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }

    @Override
    int checkBody(int at, int end) throws MalformedClientFrameException {
        return need(at, PROOF_LENGTH + SIGNATURE_LENGTH, end, "proof and signature");
    }

    public void clientProof(byte[] dst) {
        bytes(HEADER_LENGTH, dst, PROOF_LENGTH);
    }

    public void signature(byte[] dst) {
        bytes(HEADER_LENGTH + PROOF_LENGTH, dst, SIGNATURE_LENGTH);
    }
}
