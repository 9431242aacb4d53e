package io.queueenterprise.protocol.client;

import io.queueenterprise.protocol.FrameTrailerMac;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * HMAC-SHA256 (first 16 bytes) of a client frame under one key: {@link FrameTrailerMac}, the mechanism the replication
 * peers' frames use too, with the client frame's minimum length. One thread at a time.
 */
public final class ClientFrameMac {
    private final FrameTrailerMac trailer;

    /** Takes {@code key} and zeroes the caller's array (the client credential derives it). */
    ClientFrameMac(byte[] key) {
        trailer = new FrameTrailerMac(key);
    }

    /** Fills the MAC trailer of the frame {@code buffer[offset, offset + length)}. */
    public void sign(MutableDirectBuffer buffer, int offset, int length) {
        trailer.sign(buffer, offset, length);
    }

    /** Whether the wrapped frame's trailer is the MAC of the rest (constant time). */
    public boolean verify(ClientFrameFlyweight frame) {
        return verify(frame.buffer(), frame.offset(), frame.length());
    }

    public boolean verify(DirectBuffer buffer, int offset, int length) {
        return length >= ClientProtocol.HEADER_LENGTH + ClientProtocol.MAC_LENGTH && trailer.verify(buffer, offset, length);
    }
}
