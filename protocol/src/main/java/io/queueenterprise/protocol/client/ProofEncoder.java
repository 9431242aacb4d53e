package io.queueenterprise.protocol.client;

import static io.queueenterprise.protocol.client.ClientProtocol.PROOF_LENGTH;

/** PROOF, client → node (handshake MAC): see {@link ProofDecoder}. */
public final class ProofEncoder extends ClientFrameEncoder<ProofEncoder> {
    public ProofEncoder() {
        super(ClientFrameType.PROOF);
    }

    public int encode(long connection, long sequence, byte[] clientProof) {
        int at = begin(connection, sequence);
        bytes(at, clientProof, PROOF_LENGTH);
        return finish(at + PROOF_LENGTH);
    }
}
