package io.queueenterprise.crypto;

import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * HMAC-SHA256 (RFC 2104) over the JDK's SHA-256 (intrinsified), written out so that a MAC allocates nothing: the
 * JDK's {@code Mac.doFinal} allocates its result and the inner digest per call, which showed up as the node's only
 * per-frame allocation. Checked against {@code javax.crypto.Mac} in the tests. One thread at a time. Used for the
 * replication peers' frames and the remote clients' frames alike.
 */
public final class HmacSha256 {
    public static final int LENGTH = 32;
    private static final int BLOCK = 64;

    private final MessageDigest sha256;
    private final byte[] innerPad = new byte[BLOCK];
    private final byte[] outerPad = new byte[BLOCK];
    private final byte[] inner = new byte[LENGTH];

    public HmacSha256(byte[] key) {
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
        byte[] k = key.length > BLOCK ? sha256.digest(key) : key;
        for (int i = 0; i < BLOCK; i++) {
            byte b = i < k.length ? k[i] : 0;
            innerPad[i] = (byte) (b ^ 0x36);
            outerPad[i] = (byte) (b ^ 0x5c);
        }
    }

    /** Starts a MAC: the message follows through {@link #update}, then {@link #finish}. */
    public void start() {
        sha256.reset();
        sha256.update(innerPad);
    }

    public void update(byte[] message, int offset, int length) {
        sha256.update(message, offset, length);
    }

    /** Writes the 32-byte MAC to {@code out[offset..]}. */
    public void finish(byte[] out, int offset) {
        try {
            sha256.digest(inner, 0, LENGTH);
            sha256.update(outerPad);
            sha256.update(inner);
            sha256.digest(out, offset, LENGTH);
        } catch (DigestException e) {
            throw new IllegalStateException(e); // the buffers are sized for SHA-256: does not happen
        }
    }

    public void destroy() {
        Arrays.fill(innerPad, (byte) 0);
        Arrays.fill(outerPad, (byte) 0);
        Arrays.fill(inner, (byte) 0);
    }
}
