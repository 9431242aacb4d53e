package io.queueenterprise.replication.wire;

import org.agrona.DirectBuffer;

/**
 * A bounds-checked cursor over a frame body, used by the decoders while they validate: every read checks that
 * the field lies inside the body and throws {@link MalformedFrameException} naming the field otherwise.
 */
final class BodyReader {
    private DirectBuffer buffer;
    private int position;
    private int limit;

    BodyReader reset(DirectBuffer buffer, int offset, int length) {
        this.buffer = buffer;
        this.position = offset;
        this.limit = offset + length;
        return this;
    }

    private void need(int bytes, String field) throws MalformedFrameException {
        if (bytes < 0 || limit - position < bytes) {
            throw new MalformedFrameException(field, "needs " + bytes + " bytes, " + (limit - position) + " left in the body");
        }
    }

    int u8(String field) throws MalformedFrameException {
        need(1, field);
        return buffer.getByte(position++) & 0xFF;
    }

    int u16(String field) throws MalformedFrameException {
        need(2, field);
        int v = buffer.getShort(position, Frame.ORDER) & 0xFFFF;
        position += 2;
        return v;
    }

    int i32(String field) throws MalformedFrameException {
        need(4, field);
        int v = buffer.getInt(position, Frame.ORDER);
        position += 4;
        return v;
    }

    long i64(String field) throws MalformedFrameException {
        need(8, field);
        long v = buffer.getLong(position, Frame.ORDER);
        position += 8;
        return v;
    }

    /** Skips {@code bytes} (a byte-array field), returning where it starts. */
    int skip(int bytes, String field) throws MalformedFrameException {
        need(bytes, field);
        int start = position;
        position += bytes;
        return start;
    }

    int position() {
        return position;
    }

    void expectEnd(String what) throws MalformedFrameException {
        if (position != limit) {
            throw new MalformedFrameException(what, (limit - position) + " unexpected bytes after the last field");
        }
    }
}
