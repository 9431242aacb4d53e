package io.queueenterprise.protocol;

import io.queueenterprise.crypto.HmacSha256;
import org.agrona.DirectBuffer;

import java.util.Arrays;

/**
 * HMAC-SHA256 over bytes in an Agrona buffer, on heap or off, and a constant-time check of a truncated result: the
 * one mechanism behind the frame trailers ({@link FrameTrailerMac}) and the write tag
 * ({@link io.queueenterprise.protocol.client.WriteTag}). Reusable, for one thread, allocation-free.
 */
public final class BufferHmac {
    /** Off-heap bytes pass through a chunk of this size, since the digest works on arrays. */
    static final int CHUNK = 4096;

    private final HmacSha256 mac;
    private final byte[] result = new byte[HmacSha256.LENGTH];
    /**
     * A fixed size (the JDK's digests take direct buffers the same way) never grows, and each chunk is hashed while
     * still in L1.
     */
    private final byte[] chunk = new byte[CHUNK];

    /** Takes {@code key} and zeroes the caller's array. */
    public BufferHmac(byte[] key) {
        mac = new HmacSha256(key);
        Arrays.fill(key, (byte) 0);
    }

    public void start() {
        mac.start();
    }

    public void update(byte[] bytes, int offset, int length) {
        mac.update(bytes, offset, length);
    }

    public void update(DirectBuffer buffer, int offset, int length) {
        byte[] backing = buffer.byteArray();
        if (backing != null) {
            mac.update(backing, buffer.wrapAdjustment() + offset, length);
            return;
        }
        for (int done = 0; done < length; done += CHUNK) {
            int n = Math.min(CHUNK, length - done);
            buffer.getBytes(offset + done, chunk, 0, n);
            mac.update(chunk, 0, n);
        }
    }

    /** Ends the MAC; its first bytes are then read by {@link #copyTo} or {@link #matches}. */
    public void finish() {
        mac.finish(result, 0);
    }

    /** Copies the first {@code length} bytes of the finished MAC to {@code out[offset..]}. */
    public void copyTo(byte[] out, int offset, int length) {
        System.arraycopy(result, 0, out, offset, length);
    }

    /** The finished MAC's first {@code length} bytes, for writing into a buffer. */
    public byte[] result() {
        return result;
    }

    /** Whether {@code buffer[at, at + length)} equals the finished MAC's first {@code length} bytes (constant time). */
    public boolean matches(DirectBuffer buffer, int at, int length) {
        int diff = 0;
        for (int i = 0; i < length; i++) {
            diff |= result[i] ^ buffer.getByte(at + i);
        }
        return diff == 0;
    }

    public void destroy() {
        mac.destroy();
        Arrays.fill(result, (byte) 0);
        Arrays.fill(chunk, (byte) 0);
    }
}
