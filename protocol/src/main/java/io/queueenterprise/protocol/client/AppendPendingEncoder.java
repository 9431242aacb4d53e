package io.queueenterprise.protocol.client;

/** APPEND_PENDING, node → client (session MAC): see {@link AppendPendingDecoder}. */
public final class AppendPendingEncoder extends AppendOutcomeEncoder<AppendPendingEncoder> {
    public AppendPendingEncoder() {
        super(ClientFrameType.APPEND_PENDING);
    }
}
