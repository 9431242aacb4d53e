package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.CONNECTION_OFFSET;
import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.LENGTH_OFFSET;
import static io.queueenterprise.protocol.client.ClientProtocol.MAC_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.ORDER;
import static io.queueenterprise.protocol.client.ClientProtocol.RESERVED_OFFSET;
import static io.queueenterprise.protocol.client.ClientProtocol.SEQUENCE_OFFSET;
import static io.queueenterprise.protocol.client.ClientProtocol.TYPE_OFFSET;
import static io.queueenterprise.protocol.client.ClientProtocol.VERSION;

/**
 * A decoded client frame's header over {@code buffer[offset, offset + length)}: what every decoder (the header-only
 * {@link ClientFrameHeaderDecoder} and the per-type ones) offers, and what {@link ClientFrameMac} verifies.
 */
public abstract class ClientFrameFlyweight {
    DirectBuffer buffer;
    int offset;
    int length;
    ClientFrameType type;

    ClientFrameFlyweight() {
    }

    /**
     * Checks the header of {@code buffer[offset, offset + length)} and returns its type.
     *
     * @param reading the type the caller decodes (named in errors), or null for any
     */
    static ClientFrameType checkHeader(DirectBuffer buffer, int offset, int length, ClientFrameType reading)
            throws MalformedClientFrameException {
        if (offset < 0 || length < 0 || (long) offset + length > buffer.capacity()) {
            throw new MalformedClientFrameException("frame: [" + offset + ", +" + length + ") outside its buffer of " + buffer.capacity());
        }
        if (length < HEADER_LENGTH + MAC_LENGTH) {
            throw new TruncatedClientFrameException(reading, "header and MAC", HEADER_LENGTH + MAC_LENGTH, length);
        }
        int version = buffer.getByte(offset) & 0xFF;
        if (version != VERSION) {
            throw new MalformedClientFrameException("version: " + version + ", this side speaks " + VERSION);
        }
        int code = buffer.getByte(offset + TYPE_OFFSET) & 0xFF;
        ClientFrameType t = ClientFrameType.of(code);
        if (t == null) {
            throw new UnknownProtocolCodeException(null, "type", code);
        }
        if (buffer.getShort(offset + RESERVED_OFFSET, ORDER) != 0) {
            throw new MalformedClientFrameException(t + " reserved: not 0");
        }
        int declared = buffer.getInt(offset + LENGTH_OFFSET, ORDER);
        if (declared != length) {
            throw new MalformedClientFrameException(t + " length: says " + declared + ", frame has " + length);
        }
        return t;
    }

    /** The type of the frame wrapped last; null when the last wrap failed. */
    public final ClientFrameType type() {
        return type;
    }

    public final DirectBuffer buffer() {
        return buffer;
    }

    public final int offset() {
        return offset;
    }

    public final int length() {
        return length;
    }

    public final int macOffset() {
        return offset + length - MAC_LENGTH;
    }

    public final long connection() {
        return buffer.getLong(offset + CONNECTION_OFFSET, ORDER);
    }

    public final long sequence() {
        return buffer.getLong(offset + SEQUENCE_OFFSET, ORDER);
    }
}
