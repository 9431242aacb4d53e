package io.queueenterprise.protocol;

import io.queueenterprise.crypto.HmacSha256;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * HMAC-SHA256, first {@value #LENGTH} bytes, as the trailer of a frame in an Agrona buffer: the one mechanism behind
 * the client frames' MAC ({@link ClientFrameMac}) and the replication peers' session MACs. Reusable, for one thread;
 * allocation-free once its copy buffer has grown to the largest off-heap frame.
 */
public final class FrameTrailerMac {
    public static final int LENGTH = 16;
    static final int CHUNK = 4096;

    private final HmacSha256 mac;
    private final byte[] result = new byte[HmacSha256.LENGTH];
    /**
     * Off-heap frames pass through here, a chunk at a time, for the digest, which works on arrays: a fixed size (the
     * JDK's digests take direct buffers the same way) never grows, and each chunk is hashed while still in L1.
     */
    private final byte[] chunk = new byte[CHUNK];

    /** Takes {@code key} and zeroes the caller's array. */
    public FrameTrailerMac(byte[] key) {
        mac = new HmacSha256(key);
        java.util.Arrays.fill(key, (byte) 0);
    }

    /** Fills the trailer of the frame {@code buffer[offset, offset + length)} with the MAC of the bytes before it. */
    public void sign(MutableDirectBuffer buffer, int offset, int length) {
        compute(buffer, offset, length - LENGTH);
        buffer.putBytes(offset + length - LENGTH, result, 0, LENGTH);
    }

    /** Whether the trailer of {@code buffer[offset, offset + length)} is the MAC of the bytes before it (constant time). */
    public boolean verify(DirectBuffer buffer, int offset, int length) {
        if (length < LENGTH) {
            return false;
        }
        compute(buffer, offset, length - LENGTH);
        int at = offset + length - LENGTH;
        int diff = 0;
        for (int i = 0; i < LENGTH; i++) {
            diff |= result[i] ^ buffer.getByte(at + i);
        }
        return diff == 0;
    }

    private void compute(DirectBuffer buffer, int offset, int length) {
        mac.start();
        byte[] backing = buffer.byteArray();
        if (backing != null) {
            mac.update(backing, buffer.wrapAdjustment() + offset, length);
        } else {
            for (int done = 0; done < length; done += CHUNK) {
                int n = Math.min(CHUNK, length - done);
                buffer.getBytes(offset + done, chunk, 0, n);
                mac.update(chunk, 0, n);
            }
        }
        mac.finish(result, 0);
    }
}
