package io.queueenterprise.crypto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Poly1305 (RFC 8439 section 2.5) keyed with a ONE-TIME 32-byte key (r || s) per message: the envelope takes
 * it from AES of counter blocks 0 and 1 of the excerpt's own nonce, as RFC 8439 takes it from ChaCha20 block 0.
 * A nonce repeat therefore exposes at most the pair of messages that share it, never the other excerpts.
 *
 * <p>Two ways to feed it: {@link #mac} is textbook Poly1305 over one message (for test vectors), and
 * {@link #init} / {@link #absorbFull} / {@link #absorbTail} / {@link #finish} are the incremental form the
 * envelope uses (RFC 8439 section 2.8's AEAD layout: each part zero-padded to 16 bytes, lengths last), which
 * lets the appender absorb everything but the last block before it takes Chronicle's write lock. Two calls per
 * message, since each call loads and stores the accumulator: the whole ciphertext
 * blocks, then the padded remainder and the lengths block together.
 *
 * <p>Implementation: radix 2^64 (two 64-bit limbs plus a small third), 128-bit products with
 * {@link Math#multiplyHigh} (a JIT intrinsic), the same reduction as the 64-bit code in OpenSSL/poly1305-donna.
 * No data-dependent branches or table lookups; single-threaded; allocation-free.
 */
final class Poly1305 {
    static final int KEY_LENGTH = 32;
    static final int TAG_LENGTH = 16;
    private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private long r0;
    private long r1;
    private long s1; // 5 * r1 / 4 (r1 is a multiple of 4 after clamping)
    private long pad0;
    private long pad1;
    private long h0;
    private long h1;
    private long h2;
    private final byte[] last = new byte[16];
    private final byte[] tail = new byte[32];
    private final byte[] expected = new byte[TAG_LENGTH];

    /** Starts a message under the one-time key {@code key[off .. off+32)}: r (clamped here), then s. */
    void init(byte[] key, int off) {
        r0 = (long) LONG_LE.get(key, off) & 0x0ffffffc0fffffffL;
        r1 = (long) LONG_LE.get(key, off + 8) & 0x0ffffffc0ffffffcL;
        s1 = r1 + (r1 >>> 2);
        pad0 = (long) LONG_LE.get(key, off + 16);
        pad1 = (long) LONG_LE.get(key, off + 24);
        h0 = 0;
        h1 = 0;
        h2 = 0;
    }

    /**
     * Absorbs {@code len} bytes (a multiple of 16) as full blocks, in one pass: for the envelope, the header
     * and every whole ciphertext block, which lie contiguous in the envelope.
     */
    void absorbFull(byte[] m, int off, int len) {
        blocks(m, off, len, 1L);
    }

    /**
     * Absorbs the end of the AEAD layout in one pass: the last {@code partialLen} (0..15) ciphertext bytes
     * zero-padded to a block when there are any, then the block le64(a) || le64(b). The partial block is read in
     * place, masked, when 16 bytes of {@code m} follow {@code off} (in an envelope the tag does): at 40 bytes the
     * copy through a scratch array cost about a quarter of the whole MAC here.
     */
    void absorbTail(byte[] m, int off, int partialLen, long a, long b) {
        byte[] t = tail;
        int n = 0;
        if (partialLen != 0) {
            if (off + 16 <= m.length) {
                // Read the partial block in place (the envelope's tag follows it) and mask off what is not ours.
                long m0 = (long) LONG_LE.get(m, off);
                long m1 = (long) LONG_LE.get(m, off + 8);
                if (partialLen <= 8) {
                    m0 &= -1L >>> (64 - 8 * partialLen);
                    m1 = 0;
                } else {
                    m1 &= -1L >>> (128 - 8 * partialLen);
                }
                LONG_LE.set(t, 0, m0);
                LONG_LE.set(t, 8, m1);
            } else {
                System.arraycopy(m, off, t, 0, partialLen);
                java.util.Arrays.fill(t, partialLen, 16, (byte) 0);
            }
            n = 16;
        }
        LONG_LE.set(t, n, a);
        LONG_LE.set(t, n + 8, b);
        blocks(t, 0, n + 16, 1L);
    }

    /** Writes the tag to {@code out[outOff .. +16)}. */
    void finish(byte[] out, int outOff) {
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
        long t0 = h0 + pad0;
        c = carry(h0, pad0, t0);
        LONG_LE.set(out, outOff, t0);
        LONG_LE.set(out, outOff + 8, h1 + pad1 + c);
    }

    /** Finishes and compares with {@code tag[tagOff .. +16)} in constant time. */
    boolean verify(byte[] tag, int tagOff) {
        finish(expected, 0);
        long d = ((long) LONG_LE.get(expected, 0) ^ (long) LONG_LE.get(tag, tagOff))
                | ((long) LONG_LE.get(expected, 8) ^ (long) LONG_LE.get(tag, tagOff + 8));
        return d == 0;
    }

    /** Textbook Poly1305 of {@code m[off .. off+len)} under {@code key[keyOff .. +32)}: RFC 8439 section 2.5. */
    void mac(byte[] key, int keyOff, byte[] m, int off, int len, byte[] out, int outOff) {
        init(key, keyOff);
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
        finish(out, outOff);
    }

    /** Forgets the one-time key and the state (they are worthless after use, but need not linger). */
    void wipe() {
        r0 = r1 = s1 = pad0 = pad1 = h0 = h1 = h2 = 0;
        java.util.Arrays.fill(last, (byte) 0);
        java.util.Arrays.fill(tail, (byte) 0);
        java.util.Arrays.fill(expected, (byte) 0);
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
            c = carry(h0, c, t0); // c may reach 1.25 * 2^63: the full carry
            h0 = t0;
            t1 = h1 + c;
            c = (h1 & ~t1) >>> 63; // adding 0 or 1: a carry out only when the top bit falls
            h1 = t1;
            h2 += c;
        }
        this.h0 = h0;
        this.h1 = h1;
        this.h2 = h2;
    }

    /** Carry out of the unsigned addition a + b (+ carry-in) = sum (mod 2^64), branch-free. */
    private static long carry(long a, long b, long sum) {
        return ((a & b) | ((a | b) & ~sum)) >>> 63;
    }

    /** High 64 bits of the unsigned 128-bit product a * b, where b < 2^63. */
    private static long umulhi(long a, long b) {
        return Math.multiplyHigh(a, b) + ((a >> 63) & b);
    }
}
