package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.PROOF_LENGTH;

/**
 * PROOF, client → node (handshake MAC): the client's proof.
 * <pre>32 client proof</pre>
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
        return need(at, PROOF_LENGTH, end, "proof");
    }

    public void clientProof(byte[] dst) {
        bytes(HEADER_LENGTH, dst, PROOF_LENGTH);
    }
}
