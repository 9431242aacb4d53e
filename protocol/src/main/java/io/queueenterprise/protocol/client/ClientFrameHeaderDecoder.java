package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

/**
 * Reads only a client frame's header, to dispatch on its type: the receiver then wraps that type's decoder, which
 * checks the body. Reusable, one thread at a time.
 */
public final class ClientFrameHeaderDecoder extends ClientFrameFlyweight {
    /**
     * Wraps {@code buffer[offset, offset + length)} and checks its header (version, type code, reserved bytes, length).
     *
     * @throws MalformedClientFrameException naming what does not fit
     */
    public ClientFrameHeaderDecoder wrap(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        type = null;
        ClientFrameType t = checkHeader(buffer, offset, length, null);
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        this.type = t;
        return this;
    }
}
