package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

/**
 * APPEND_PENDING, node → client (session MAC): the envelope is at this index, waiting for a quorum (the answer to a
 * retry while it waits).
 */
public final class AppendPendingDecoder extends AppendOutcomeDecoder {
    public AppendPendingDecoder() {
        super(ClientFrameType.APPEND_PENDING);
    }

    public AppendPendingDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }
}
