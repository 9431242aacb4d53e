package io.queueenterprise.remote.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * HMAC-SHA256 (first 16 bytes) of a client frame under one key, written over the JDK's SHA-256 so that a MAC
 * allocates nothing ({@code Mac.doFinal} allocates per call). The same construction as the replication module's
 * peer-frame MAC; one thread at a time.
 */
public final class ClientFrameMac {
    private static final int BLOCK = 64;
    private static final int LENGTH = 32;

    private final MessageDigest sha256;
    private final byte[] innerPad = new byte[BLOCK];
    private final byte[] outerPad = new byte[BLOCK];
    private final byte[] inner = new byte[LENGTH];
    private final byte[] result = new byte[LENGTH];
    private byte[] copy = new byte[2048];

    ClientFrameMac(byte[] key) {
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
        for (int i = 0; i < BLOCK; i++) {
            byte b = i < key.length ? key[i] : 0;
            innerPad[i] = (byte) (b ^ 0x36);
            outerPad[i] = (byte) (b ^ 0x5c);
        }
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
        sha256.reset();
        sha256.update(innerPad);
        byte[] backing = buffer.byteArray();
        if (backing != null) {
            sha256.update(backing, (int) (buffer.addressOffset() - org.agrona.BufferUtil.ARRAY_BASE_OFFSET) + offset, length);
        } else {
            if (copy.length < length) {
                copy = new byte[Math.max(length, copy.length * 2)];
            }
            buffer.getBytes(offset, copy, 0, length);
            sha256.update(copy, 0, length);
        }
        try {
            sha256.digest(inner, 0, LENGTH);
            sha256.update(outerPad);
            sha256.update(inner);
            sha256.digest(result, 0, LENGTH);
        } catch (DigestException e) {
            throw new IllegalStateException(e); // buffers sized for SHA-256
        }
    }
}
