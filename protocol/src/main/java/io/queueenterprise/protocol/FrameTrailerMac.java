package io.queueenterprise.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * HMAC-SHA256, first {@value #LENGTH} bytes, as the trailer of a frame in an Agrona buffer: the one mechanism behind
 * the client frames' MAC ({@link ClientFrameMac}) and the replication peers' session MACs. Reusable, for one thread;
 * allocation-free once its copy buffer has grown to the largest off-heap frame.
 */
public final class FrameTrailerMac {
    public static final int LENGTH = 16;
    /** How much of an off-heap frame is hashed at a time ({@link BufferHmac}). */
    static final int CHUNK = BufferHmac.CHUNK;

    private final BufferHmac mac;

    /** Takes {@code key} and zeroes the caller's array. */
    public FrameTrailerMac(byte[] key) {
        mac = new BufferHmac(key);
    }

    /** Fills the trailer of the frame {@code buffer[offset, offset + length)} with the MAC of the bytes before it. */
    public void sign(MutableDirectBuffer buffer, int offset, int length) {
        compute(buffer, offset, length - LENGTH);
        buffer.putBytes(offset + length - LENGTH, mac.result(), 0, LENGTH);
    }

    /** Whether the trailer of {@code buffer[offset, offset + length)} is the MAC of the bytes before it (constant time). */
    public boolean verify(DirectBuffer buffer, int offset, int length) {
        if (length < LENGTH) {
            return false;
        }
        compute(buffer, offset, length - LENGTH);
        return mac.matches(buffer, offset + length - LENGTH, LENGTH);
    }

    private void compute(DirectBuffer buffer, int offset, int length) {
        mac.start();
        mac.update(buffer, offset, length);
        mac.finish();
    }
}
