package io.queueenterprise.replication.wire;

import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;

/**
 * Writes frames into a buffer (an {@link org.agrona.ExpandableArrayBuffer} grows as needed): {@link #begin} the
 * header, put the body's fields in the order the type's layout gives, {@link #finish} (length set, MAC trailer
 * reserved, to be filled by the session's authenticator). Allocation-free.
 */
public final class FrameEncoder {
    private MutableDirectBuffer buffer;
    private int start;
    private int position;

    public FrameEncoder begin(MutableDirectBuffer buffer, int offset, FrameType type, int sender, long term,
                              long sessionId, long sequence) {
        this.buffer = buffer;
        this.start = offset;
        buffer.putByte(offset + Frame.VERSION_OFFSET, (byte) Frame.VERSION);
        buffer.putByte(offset + Frame.TYPE_OFFSET, (byte) type.code);
        buffer.putShort(offset + Frame.SENDER_OFFSET, (short) sender, Frame.ORDER);
        buffer.putLong(offset + Frame.TERM_OFFSET, term, Frame.ORDER);
        buffer.putLong(offset + Frame.SESSION_OFFSET, sessionId, Frame.ORDER);
        buffer.putLong(offset + Frame.SEQUENCE_OFFSET, sequence, Frame.ORDER);
        this.position = offset + Frame.HEADER_LENGTH;
        return this;
    }

    public FrameEncoder u8(int v) {
        buffer.putByte(position, (byte) v);
        position += 1;
        return this;
    }

    public FrameEncoder u16(int v) {
        buffer.putShort(position, (short) v, Frame.ORDER);
        position += 2;
        return this;
    }

    public FrameEncoder i32(int v) {
        buffer.putInt(position, v, Frame.ORDER);
        position += 4;
        return this;
    }

    public FrameEncoder i64(long v) {
        buffer.putLong(position, v, Frame.ORDER);
        position += 8;
        return this;
    }

    public FrameEncoder bytes(byte[] src, int offset, int length) {
        buffer.putBytes(position, src, offset, length);
        position += length;
        return this;
    }

    /** A u8-length-prefixed name (HELLO's queue names). */
    public FrameEncoder shortString(String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        return u8(bytes.length).bytes(bytes, 0, bytes.length);
    }

    /** A u16-length-prefixed message, cut to {@link RefusalBody#MAX_MESSAGE} bytes. */
    public FrameEncoder message(String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(bytes.length, RefusalBody.MAX_MESSAGE);
        return u16(n).bytes(bytes, 0, n);
    }

    /** The position the next field goes to (to patch a count later with {@link #putI32At}). */
    public int position() {
        return position;
    }

    public void putI32At(int at, int v) {
        buffer.putInt(at, v, Frame.ORDER);
    }

    /** Sets the length, reserves the MAC trailer; returns the frame's total length. */
    public int finish() {
        int length = position - start + Frame.MAC_LENGTH;
        buffer.putInt(start + Frame.LENGTH_OFFSET, length, Frame.ORDER);
        position += Frame.MAC_LENGTH;
        return length;
    }
}
