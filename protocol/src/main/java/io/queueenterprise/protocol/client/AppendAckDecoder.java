package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

/** APPEND_ACK, node → client (session MAC): the envelope is at this index and the queue's ack mode is met. */
public final class AppendAckDecoder extends AppendOutcomeDecoder {
    public AppendAckDecoder() {
        super(ClientFrameType.APPEND_ACK);
    }

    public AppendAckDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        wrapFrame(buffer, offset, length);
        return this;
    }
}
