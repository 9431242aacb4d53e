package io.queueenterprise.remote.wire;

import io.queueenterprise.crypto.HmacSha256;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * HMAC-SHA256 (first 16 bytes) of a client frame under one key, through the allocation-free {@link HmacSha256} that
 * the replication peers' frames use too. One thread at a time.
 */
public final class ClientFrameMac {
    private final HmacSha256 mac;
    private final byte[] result = new byte[HmacSha256.LENGTH];
    private byte[] copy = new byte[2048];

    ClientFrameMac(byte[] key) {
        mac = new HmacSha256(key);
        java.util.Arrays.fill(key, (byte) 0);
    }

    /** Fills the MAC trailer of the frame {@code buffer[offset, offset + length)}. */
    public void sign(MutableDirectBuffer buffer, int offset, int length) {
        compute(buffer, offset, length - ClientFrame.MAC_LENGTH);
        buffer.putBytes(offset + length - ClientFrame.MAC_LENGTH, result, 0, ClientFrame.MAC_LENGTH);
    }

    /** Whether the wrapped frame's trailer is the MAC of the rest (constant time). */
    public boolean verify(ClientFrame frame) {
        return verify(frame.buffer(), frame.offset(), frame.length());
    }

    public boolean verify(DirectBuffer buffer, int offset, int length) {
        if (length < ClientFrame.HEADER_LENGTH + ClientFrame.MAC_LENGTH) {
            return false;
        }
        compute(buffer, offset, length - ClientFrame.MAC_LENGTH);
        int at = offset + length - ClientFrame.MAC_LENGTH;
        int diff = 0;
        for (int i = 0; i < ClientFrame.MAC_LENGTH; i++) {
            diff |= result[i] ^ buffer.getByte(at + i);
        }
        return diff == 0;
    }

    private void compute(DirectBuffer buffer, int offset, int length) {
        mac.start();
        byte[] backing = buffer.byteArray();
        if (backing != null) {
            mac.update(backing, (int) (buffer.addressOffset() - org.agrona.BufferUtil.ARRAY_BASE_OFFSET) + offset, length);
        } else {
            if (copy.length < length) {
                copy = new byte[Math.max(length, copy.length * 2)];
            }
            buffer.getBytes(offset, copy, 0, length);
            mac.update(copy, 0, length);
        }
        mac.finish(result, 0);
    }
}
