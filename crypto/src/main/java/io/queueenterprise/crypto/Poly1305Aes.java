package io.queueenterprise.crypto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Poly1305 with a fixed (clamped) r and a per-message pad s supplied by the caller:
 * tag = ((Poly1305 polynomial of m evaluated at r, mod 2^130 - 5) + s) mod 2^128, little-endian: Bernstein's
 * Poly1305-AES where s = AES_k(nonce).
 *
 * <p>Implementation: radix 2^64 (two 64-bit limbs plus a small third), 128-bit products with
 * {@link Math#multiplyHigh} (a JIT intrinsic), the same reduction as the 64-bit code in OpenSSL/poly1305-donna.
 * No data-dependent branches or table lookups; single-threaded; allocation-free. It replaced the Bouncy
 * Castle {@code Poly1305} (32-bit limbs) after measurement (docs/crypto.md); tests check it against Bouncy
 * Castle, a BigInteger textbook implementation and the RFC 8439 / Bernstein vectors.
 */
final class Poly1305Aes {
    static final int TAG_LENGTH = 16;
    private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final long r0;
    private final long r1;
    private final long s1; // 5 * r1 / 4 (r1 is a multiple of 4 after clamping)
    private final byte[] last = new byte[16];
    private long h0;
    private long h1;
    private long h2;
    private final byte[] expected = new byte[TAG_LENGTH];

    /** @param r 16 bytes, clamped here as Poly1305 specifies. Not retained. */
    Poly1305Aes(byte[] r) {
        if (r.length != 16) {
            throw new IllegalArgumentException("Poly1305 r must be 16 bytes");
        }
        r0 = (long) LONG_LE.get(r, 0) & 0x0ffffffc0fffffffL;
        r1 = (long) LONG_LE.get(r, 8) & 0x0ffffffc0ffffffcL;
        s1 = r1 + (r1 >>> 2);
    }

    /** Writes (Poly1305_r(m[off .. off+len)) + pad) mod 2^128 to {@code out[outOff .. +16)}. */
    void tag(byte[] m, int off, int len, byte[] pad, byte[] out, int outOff) {
        h0 = 0;
        h1 = 0;
        h2 = 0;
        int full = len & ~15;
        blocks(m, off, full, 1L);
        int rest = len - full;
        if (rest != 0) {
            // final partial block: the bytes, then 0x01, then zeros; no 2^128 bit
            byte[] l = last;
            System.arraycopy(m, off + full, l, 0, rest);
            l[rest] = 1;
            for (int i = rest + 1; i < 16; i++) {
                l[i] = 0;
            }
            blocks(l, 0, 16, 0L);
        }
        long h0 = this.h0;
        long h1 = this.h1;
        long h2 = this.h2;
        // final reduction: if h >= p = 2^130 - 5 then h -= p (constant time)
        long g0 = h0 + 5;
        long c = carry(h0, 5, g0);
        long g1 = h1 + c;
        c = carry(h1, c, g1);
        long g2 = h2 + c;
        long mask = -(g2 >>> 2); // all ones when h + 5 >= 2^130
        h0 = (h0 & ~mask) | (g0 & mask);
        h1 = (h1 & ~mask) | (g1 & mask);
        // + s mod 2^128
        long s0 = (long) LONG_LE.get(pad, 0);
        long sHi = (long) LONG_LE.get(pad, 8);
        long t0 = h0 + s0;
        c = carry(h0, s0, t0);
        LONG_LE.set(out, outOff, t0);
        LONG_LE.set(out, outOff + 8, h1 + sHi + c);
    }

    /** Absorbs {@code n} (a multiple of 16) bytes: h = (h + block + padBit * 2^128) * r, partially reduced. */
    private void blocks(byte[] src, int pos, int n, long padBit) {
        long h0 = this.h0;
        long h1 = this.h1;
        long h2 = this.h2;
        final long r0 = this.r0;
        final long r1 = this.r1;
        final long s1 = this.s1;
        for (int end = pos + n; pos < end; pos += 16) {
            long m0 = (long) LONG_LE.get(src, pos);
            long m1 = (long) LONG_LE.get(src, pos + 8);
            // h += m (+ 2^128 for full blocks)
            long t0 = h0 + m0;
            long c = carry(h0, m0, t0);
            long t1 = h1 + m1 + c;
            c = carry(h1, m1, t1); // also right with a carry-in: it looks at bit 63 only
            h0 = t0;
            h1 = t1;
            h2 += c + padBit;
            // d = h * r with 2^130 = 5 folded in: d0 = h0 r0 + h1 s1, d1 = h0 r1 + h1 r0 + h2 s1, d2 = h2 r0
            long d0lo = h0 * r0;
            long d0hi = umulhi(h0, r0);
            long x = h1 * s1;
            long lo = d0lo + x;
            d0hi += umulhi(h1, s1) + carry(d0lo, x, lo);
            d0lo = lo;

            long d1lo = h0 * r1;
            long d1hi = umulhi(h0, r1);
            x = h1 * r0;
            lo = d1lo + x;
            d1hi += umulhi(h1, r0) + carry(d1lo, x, lo);
            d1lo = lo;
            x = h2 * s1; // h2 is tiny: the product fits 64 bits
            lo = d1lo + x;
            d1hi += carry(d1lo, x, lo);
            d1lo = lo;

            h0 = d0lo;
            lo = d1lo + d0hi;
            d1hi += carry(d1lo, d0hi, lo);
            h1 = lo;
            h2 = h2 * r0 + d1hi;
            // fold the bits above 2^130: c = 5 * (h2 >>> 2)
            c = (h2 >>> 2) + (h2 & ~3L);
            h2 &= 3;
            t0 = h0 + c;
            c = carry(h0, c, t0);
            h0 = t0;
            t1 = h1 + c;
            c = carry(h1, c, t1);
            h1 = t1;
            h2 += c;
        }
        this.h0 = h0;
        this.h1 = h1;
        this.h2 = h2;
    }

    /** Computes the tag over {@code m} and compares it in constant time with {@code tag[tagOff .. +16)}. */
    boolean verify(byte[] m, int mOff, int mLen, byte[] pad, byte[] tag, int tagOff) {
        tag(m, mOff, mLen, pad, expected, 0);
        long d = ((long) LONG_LE.get(expected, 0) ^ (long) LONG_LE.get(tag, tagOff))
                | ((long) LONG_LE.get(expected, 8) ^ (long) LONG_LE.get(tag, tagOff + 8));
        return d == 0;
    }

    /** Carry out of the unsigned addition a + b (+ carry-in) = sum (mod 2^64), branch-free. */
    private static long carry(long a, long b, long sum) {
        return ((a & b) | ((a | b) & ~sum)) >>> 63;
    }

    /** High 64 bits of the unsigned 128-bit product a * b, where b < 2^63. */
    private static long umulhi(long a, long b) {
        return Math.multiplyHigh(a, b) + ((a >> 63) & b);
    }

    /** out = (x + y) mod 2^128, little-endian 16-byte values at offset 0. */
    static void add128(byte[] x, byte[] y, byte[] out, int outOff) {
        long x0 = (long) LONG_LE.get(x, 0);
        long y0 = (long) LONG_LE.get(y, 0);
        long lo = x0 + y0;
        LONG_LE.set(out, outOff, lo);
        LONG_LE.set(out, outOff + 8, (long) LONG_LE.get(x, 8) + (long) LONG_LE.get(y, 8) + carry(x0, y0, lo));
    }
}
