package io.queueenterprise.crypto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.bouncycastle.crypto.macs.Poly1305;
import org.bouncycastle.crypto.params.KeyParameter;

/**
 * Poly1305 with a fixed (clamped) r and a per-message pad s supplied by the caller:
 * tag = (Poly1305_r(m) + s) mod 2^128, little-endian (Bernstein's Poly1305-AES with s = AES_k(nonce)).
 * One Bouncy Castle {@link Poly1305} (no cipher) keyed once with r || 0^16, so doFinal yields h mod 2^128;
 * the pad is added here. Single-threaded, allocation-free.
 */
final class Poly1305Aes {
    static final int TAG_LENGTH = 16;
    private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final Poly1305 mac = new Poly1305();
    private final byte[] h = new byte[TAG_LENGTH];
    private final byte[] expected = new byte[TAG_LENGTH];

    /** @param r 16 bytes; clamped by Bouncy Castle. Not retained. */
    Poly1305Aes(byte[] r) {
        if (r.length != 16) {
            throw new IllegalArgumentException("Poly1305 r must be 16 bytes");
        }
        byte[] key = new byte[32];
        System.arraycopy(r, 0, key, 0, 16);
        mac.init(new KeyParameter(key));
        Arrays.fill(key, (byte) 0);
    }

    /** Writes (Poly1305_r(a || b) + pad) mod 2^128 to {@code out[outOff .. +16)}. */
    void tag(byte[] a, int aOff, int aLen, byte[] b, int bOff, int bLen, byte[] pad, byte[] out, int outOff) {
        mac.update(a, aOff, aLen);
        mac.update(b, bOff, bLen);
        mac.doFinal(h, 0);
        add128(h, pad, out, outOff);
    }

    /** Computes the tag over {@code m} and compares it in constant time with {@code tag[tagOff .. +16)}. */
    boolean verify(byte[] m, int mOff, int mLen, byte[] pad, byte[] tag, int tagOff) {
        mac.update(m, mOff, mLen);
        mac.doFinal(h, 0);
        add128(h, pad, expected, 0);
        int diff = 0;
        for (int i = 0; i < TAG_LENGTH; i++) {
            diff |= expected[i] ^ tag[tagOff + i];
        }
        return diff == 0;
    }

    /** out = (x + y) mod 2^128, all little-endian 16-byte values; x and y are 16-byte arrays at offset 0. */
    static void add128(byte[] x, byte[] y, byte[] out, int outOff) {
        long x0 = (long) LONG_LE.get(x, 0);
        long x1 = (long) LONG_LE.get(x, 8);
        long y0 = (long) LONG_LE.get(y, 0);
        long y1 = (long) LONG_LE.get(y, 8);
        long lo = x0 + y0;
        long carry = ((x0 & y0) | ((x0 | y0) & ~lo)) >>> 63; // branch-free carry out of the low word
        long hi = x1 + y1 + carry;
        LONG_LE.set(out, outOff, lo);
        LONG_LE.set(out, outOff + 8, hi);
    }
}
