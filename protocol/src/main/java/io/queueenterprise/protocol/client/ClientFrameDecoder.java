package io.queueenterprise.protocol.client;

import org.agrona.DirectBuffer;

import static io.queueenterprise.protocol.client.ClientProtocol.HEADER_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.MAC_LENGTH;
import static io.queueenterprise.protocol.client.ClientProtocol.ORDER;

/**
 * The decoder of one frame type: {@link #wrapFrame} checks the header, that the frame is of this decoder's type
 * ({@link WrongClientFrameTypeException} otherwise), and the whole body (every length against the frame's bounds,
 * every code against its table), throwing only {@link MalformedClientFrameException}s; the type's accessors then read
 * without further checks. Reusable, one thread at a time, allocation-free unless the frame is malformed.
 */
public abstract class ClientFrameDecoder extends ClientFrameFlyweight {
    private final ClientFrameType decodes;

    ClientFrameDecoder(ClientFrameType decodes) {
        this.decodes = decodes;
    }

    /** The frame type this decoder reads. */
    public final ClientFrameType decodes() {
        return decodes;
    }

    final void wrapFrame(DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        type = null;
        ClientFrameType actual = checkHeader(buffer, offset, length, decodes);
        if (actual != decodes) {
            throw new WrongClientFrameTypeException(decodes, actual);
        }
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        int end = length - MAC_LENGTH;
        int at = checkBody(HEADER_LENGTH, end);
        if (at != end) {
            throw new MalformedClientFrameException(decodes + " body: " + (end - at) + " bytes after the last field");
        }
        type = actual;
    }

    /**
     * Checks the body from {@code at} (relative to the frame) up to {@code end} (where the MAC starts) and records
     * where its variable fields are.
     *
     * @return the position after the body's last field
     */
    abstract int checkBody(int at, int end) throws MalformedClientFrameException;

    /** Position after {@code bytes} more bytes of {@code field}, or a {@link TruncatedClientFrameException}. */
    final int need(int at, int bytes, int end, String field) throws TruncatedClientFrameException {
        if (bytes < 0 || at + bytes > end || at + bytes < at) {
            throw new TruncatedClientFrameException(decodes, field, bytes, Math.max(0, end - at));
        }
        return at + bytes;
    }

    final UnknownProtocolCodeException unknown(String field, int code) {
        return new UnknownProtocolCodeException(decodes, field, code);
    }

    final MalformedClientFrameException malformed(String field, String problem) {
        return new MalformedClientFrameException(decodes + " " + field + ": " + problem);
    }

    // reads relative to the frame's start

    final int u8(int at) {
        return buffer.getByte(offset + at) & 0xFF;
    }

    final int u16(int at) {
        return buffer.getShort(offset + at, ORDER) & 0xFFFF;
    }

    final int i32(int at) {
        return buffer.getInt(offset + at, ORDER);
    }

    final long i64(int at) {
        return buffer.getLong(offset + at, ORDER);
    }

    final String ascii(int at, int bytes) {
        return buffer.getStringWithoutLengthAscii(offset + at, bytes);
    }

    final String utf8(int at, int bytes) {
        return buffer.getStringWithoutLengthUtf8(offset + at, bytes);
    }

    final void bytes(int at, byte[] dst, int bytes) {
        buffer.getBytes(offset + at, dst, 0, bytes);
    }
}
