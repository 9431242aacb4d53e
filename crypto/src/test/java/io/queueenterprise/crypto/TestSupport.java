package io.queueenterprise.crypto;

import java.math.BigInteger;
import java.util.HexFormat;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/** Independent reference implementations (JDK CTR, BigInteger Poly1305) and helpers for the tests. */
final class TestSupport {
    private TestSupport() {
    }

    static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replace(" ", ""));
    }

    static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }

    static byte[] reverse(byte[] b) {
        byte[] r = new byte[b.length];
        for (int i = 0; i < b.length; i++) {
            r[i] = b[b.length - 1 - i];
        }
        return r;
    }

    static BigInteger le(byte[] b, int off, int len) {
        byte[] x = new byte[len];
        System.arraycopy(b, off, x, 0, len);
        return new BigInteger(1, reverse(x));
    }

    static byte[] le16(BigInteger v) {
        byte[] out = new byte[16];
        byte[] be = v.mod(BigInteger.ONE.shiftLeft(128)).toByteArray();
        for (int i = 0; i < 16 && i < be.length; i++) {
            out[i] = be[be.length - 1 - i];
        }
        return out;
    }

    /** Textbook Poly1305 (RFC 8439 §2.5.1) with BigInteger: tag = (h_r(m) + s) mod 2^128. */
    static byte[] poly1305Reference(byte[] r16, byte[] s16, byte[] m) {
        BigInteger p = BigInteger.ONE.shiftLeft(130).subtract(BigInteger.valueOf(5));
        BigInteger r = le(r16, 0, 16).and(new BigInteger("0ffffffc0ffffffc0ffffffc0fffffff", 16));
        BigInteger h = BigInteger.ZERO;
        for (int i = 0; i < m.length; i += 16) {
            int n = Math.min(16, m.length - i);
            BigInteger block = le(m, i, n).add(BigInteger.ONE.shiftLeft(8 * n));
            h = h.add(block).multiply(r).mod(p);
        }
        return le16(h.add(le(s16, 0, 16)));
    }

    /** AES-128-CTR with the JDK's own CTR mode from the given 16-byte initial counter block. */
    static byte[] jdkCtr(byte[] key, byte[] iv, byte[] in) throws Exception {
        Cipher c = Cipher.getInstance("AES/CTR/NoPadding");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(iv));
        return c.doFinal(in);
    }

    static byte[] jdkAesBlock(byte[] key, byte[] block) throws Exception {
        Cipher c = Cipher.getInstance("AES/ECB/NoPadding");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"));
        return c.doFinal(block);
    }

    /** Counter block epoch(8, BE) || sequence(4, BE) || counter(4, BE). */
    static byte[] counterBlock(long epoch, int sequence, int counter) {
        return java.nio.ByteBuffer.allocate(16).putLong(epoch).putInt(sequence).putInt(counter).array();
    }

    /**
     * The envelope's authenticator input, built independently of the production code (RFC 8439 section 2.8
     * layout): header || ciphertext zero-padded to 16 || le64(index or 0) || le64(ciphertext length).
     */
    static byte[] macInput(byte[] header16, byte[] ciphertext, long boundIndex) {
        int padded = (ciphertext.length + 15) / 16 * 16;
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(padded + 16).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.put(ciphertext).position(padded);
        // the last block: le64(index or 0) || le64(ciphertext length | (version, mode byte, key id) << 32)
        long headerWord = java.nio.ByteBuffer.wrap(header16, 0, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt();
        b.putLong(boundIndex).putLong(ciphertext.length | headerWord << 32);
        return b.array();
    }

    /** A fixed epoch source: lets a test force two writers onto one nonce (what the design makes improbable). */
    static WriterEpochs fixedEpoch(long epoch) {
        return new WriterEpochs() {
            @Override
            public long next() {
                return epoch;
            }
        };
    }
}
