package io.queueenterprise.protocol.client;

/** APPEND_ACK, node → client (session MAC): see {@link AppendAckDecoder}. */
public final class AppendAckEncoder extends AppendOutcomeEncoder<AppendAckEncoder> {
    public AppendAckEncoder() {
        super(ClientFrameType.APPEND_ACK);
    }
}
