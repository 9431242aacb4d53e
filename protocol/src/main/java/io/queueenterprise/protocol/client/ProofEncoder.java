package io.queueenterprise.protocol.client;

import static io.queueenterprise.protocol.client.ClientProtocol.EPHEMERAL_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.SIGNATURE_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.PROOF_LENGTH;

/** PROOF, client → node (handshake MAC): see {@link ProofDecoder}. */
public final class ProofEncoder extends ClientFrameEncoder<ProofEncoder> {
    public ProofEncoder() {
        super(ClientFrameType.PROOF);
    }

    /** @param signature the client identity's signature of the transcript; all zeros from a client without an identity */
    public int encode(long connection, long sequence, byte[] clientProof, byte[] signature) {
        int at = begin(connection, sequence);
        bytes(at, clientProof, PROOF_LENGTH);
        bytes(at + PROOF_LENGTH, signature, SIGNATURE_LENGTH);
        return finish(at + PROOF_LENGTH + SIGNATURE_LENGTH);
    }
}
