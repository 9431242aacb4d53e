package io.queueenterprise.protocol.client;

import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;

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
 * The encoder of one frame type over {@code buffer[offset ..]}: {@link #wrap} it, then the type's {@code encode}
 * writes header and body and returns the frame's length, MAC trailer included but not yet signed
 * ({@link ClientFrameMac#sign}). Reusable, one thread at a time; the hot-path types (APPEND, its answers, the tail
 * frames) allocate nothing.
 *
 * @param <E> the concrete encoder, so that {@code wrap} chains
 */
public abstract class ClientFrameEncoder<E extends ClientFrameEncoder<E>> {
    private final ClientFrameType encodes;
    MutableDirectBuffer buffer;
    int offset;

    ClientFrameEncoder(ClientFrameType encodes) {
        this.encodes = encodes;
    }

    /** The frame type this encoder writes. */
    public final ClientFrameType encodes() {
        return encodes;
    }

    @SuppressWarnings("unchecked")
    public final E wrap(MutableDirectBuffer buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return (E) this;
    }

    /** Writes the header (length last, in {@link #finish}); returns the body's first position relative to the frame. */
    final int begin(long connection, long sequence) {
        buffer.putByte(offset, (byte) VERSION);
        buffer.putByte(offset + TYPE_OFFSET, (byte) encodes.code());
        buffer.putShort(offset + RESERVED_OFFSET, (short) 0, ORDER);
        buffer.putLong(offset + CONNECTION_OFFSET, connection, ORDER);
        buffer.putLong(offset + SEQUENCE_OFFSET, sequence, ORDER);
        return HEADER_LENGTH;
    }

    /** Writes the length for a body ending at {@code bodyEnd}; returns the frame length (MAC still to be written). */
    final int finish(int bodyEnd) {
        int length = bodyEnd + MAC_LENGTH;
        buffer.putInt(offset + LENGTH_OFFSET, length, ORDER);
        return length;
    }

    /** Puts a u8-length-prefixed string; returns the position after it. */
    final int putShortString(int at, String s, boolean utf8, String field) {
        byte[] bytes = s.getBytes(utf8 ? StandardCharsets.UTF_8 : StandardCharsets.US_ASCII);
        if (bytes.length > 255) {
            throw new IllegalArgumentException(encodes + " " + field + ": '" + s + "' is longer than 255 bytes");
        }
        buffer.putByte(offset + at, (byte) bytes.length);
        buffer.putBytes(offset + at + 1, bytes);
        return at + 1 + bytes.length;
    }

    /** Puts a u16-length-prefixed UTF-8 message cut to {@link ClientProtocol#MAX_MESSAGE}; returns the position after it. */
    final int putMessage(int at, String message) {
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, ClientProtocol.MAX_MESSAGE);
        buffer.putShort(offset + at, (short) n, ORDER);
        buffer.putBytes(offset + at + 2, text, 0, n);
        return at + 2 + n;
    }

    final void u8(int at, int value) {
        buffer.putByte(offset + at, (byte) value);
    }

    final void u16(int at, int value) {
        buffer.putShort(offset + at, (short) value, ORDER);
    }

    final void i32(int at, int value) {
        buffer.putInt(offset + at, value, ORDER);
    }

    final void i64(int at, long value) {
        buffer.putLong(offset + at, value, ORDER);
    }

    final void bytes(int at, byte[] src, int length) {
        buffer.putBytes(offset + at, src, 0, length);
    }
}
