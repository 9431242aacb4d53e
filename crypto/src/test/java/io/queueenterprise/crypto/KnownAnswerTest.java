package io.queueenterprise.crypto;

import static io.queueenterprise.crypto.TestSupport.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

@org.junit.jupiter.api.Tag("unit")
class KnownAnswerTest {

    // NIST SP 800-38A, F.5.1 CTR-AES128.Encrypt
    static final byte[] NIST_KEY = hex("2b7e151628aed2a6abf7158809cf4f3c");
    static final byte[] NIST_PLAIN = hex("6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51"
            + "30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710");
    static final byte[] NIST_CIPHER = hex("874d6191b620e3261bef6864990db6ce 9806f66b7970fdff8617187bb9fffdff"
            + "5ae4df3edbd5d35e5b4f09020db03eab 1e031dda2fbe03d1792170a0f3009cee");

    /**
     * NIST F.5.1's initial counter is f0f1f2f3f4f5f6f7 f8f9fafb fcfdfeff: as a nonce that is epoch
     * f0..f7, sequence f8f9fafb and block counter fcfdfeff. Our keystream starts at block counter 2, so the
     * vector is checked through the raw block function and the JDK's CTR, and the batch path against the JDK.
     */
    @ParameterizedTest
    @EnumSource(CryptoEngine.class)
    void nistSp800_38a_f51_ctrAes128ThroughEngine(CryptoEngine engine) throws Exception {
        AesBlockFunction aes = engine.newBlockFunction(NIST_KEY);
        byte[] counters = hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff f0f1f2f3f4f5f6f7f8f9fafbfcfdff00"
                + "f0f1f2f3f4f5f6f7f8f9fafbfcfdff01 f0f1f2f3f4f5f6f7f8f9fafbfcfdff02");
        byte[] ks = new byte[64];
        aes.encryptBlocks(counters, 0, ks, 0, 4);
        byte[] ct = new byte[64];
        NonceKeystream.xor(ks, 0, NIST_PLAIN, 0, ct, 0, 64);
        assertArrayEquals(NIST_CIPHER, ct);
        assertArrayEquals(NIST_CIPHER, TestSupport.jdkCtr(NIST_KEY, hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"), NIST_PLAIN));
    }

    /** Keystream of every batch shape equals the JDK's own AES-CTR from block counter 2 of the nonce. */
    @ParameterizedTest
    @EnumSource(CryptoEngine.class)
    void keystreamStartsAtCounterTwoAndOneTimeKeyIsBlocksZeroAndOne(CryptoEngine engine) throws Exception {
        byte[] key = hex("000102030405060708090a0b0c0d0e0f");
        AesBlockFunction aes = engine.newBlockFunction(key);
        Random rnd = new Random(7);
        NonceKeystream batch = new NonceKeystream(true);
        long epoch = rnd.nextLong();
        int sequence = -20; // crosses 2^32 - 1 -> the batch must stop at the end of the sequence space
        for (int len : new int[] {0, 1, 15, 16, 17, 40, 255, 256, 257, 4095, 4096, 4097, 8192, 12345, 40, 40, 40}) {
            for (int repeat = 0; repeat < 3; repeat++, sequence++) {
                byte[] plain = new byte[len];
                rnd.nextBytes(plain);
                byte[] out = new byte[len];
                batch.locate(aes, epoch, sequence, len);
                batch.xor(aes, epoch, sequence, plain, 0, out, 0, len);
                assertArrayEquals(TestSupport.jdkCtr(key, TestSupport.counterBlock(epoch, sequence, 2), plain), out,
                        "len " + len + " seq " + sequence);
                byte[] otk = java.util.Arrays.copyOfRange(batch.oneTimeKey(), batch.oneTimeKeyOffset(),
                        batch.oneTimeKeyOffset() + 32);
                byte[] expected = new byte[32];
                System.arraycopy(TestSupport.jdkAesBlock(key, TestSupport.counterBlock(epoch, sequence, 0)), 0, expected, 0, 16);
                System.arraycopy(TestSupport.jdkAesBlock(key, TestSupport.counterBlock(epoch, sequence, 1)), 0, expected, 16, 16);
                assertArrayEquals(expected, otk, "one-time key, seq " + sequence);
            }
        }
    }

    /** RFC 8439 section 2.5.2. */
    @Test
    void rfc8439Section252() {
        byte[] key = hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
        byte[] msg = "Cryptographic Forum Research Group".getBytes(StandardCharsets.US_ASCII);
        assertTag(key, msg, "a8061dc1305136c6c22b8baf0c0127a9");
    }

    static final String IETF_TEXT = "Any submission to the IETF intended by the Contributor for publication as all"
            + " or part of an IETF Internet-Draft or RFC and any statement made within the context of an IETF activity"
            + " is considered an \"IETF Contribution\". Such statements include oral statements in IETF sessions, as"
            + " well as written and electronic communications made at any time or place, which are addressed to";

    /** RFC 8439 Appendix A.3, test vectors #1 to #11. */
    @Test
    void rfc8439AppendixA3() {
        byte[] ietf = IETF_TEXT.getBytes(StandardCharsets.US_ASCII);
        assertEquals(375, ietf.length);
        // #1: all zero
        assertTag(new byte[32], new byte[64], "00000000000000000000000000000000");
        // #2: r = 0, tag = s
        assertTag(hex("00000000000000000000000000000000 36e5f6b5c5e06070f0efca96227a863e"), ietf,
                "36e5f6b5c5e06070f0efca96227a863e");
        // #3: s = 0
        assertTag(hex("36e5f6b5c5e06070f0efca96227a863e 00000000000000000000000000000000"), ietf,
                "f3477e7cd95417af89a6b8794c310cf0");
        // #4: Jabberwocky
        byte[] jabberwocky = ("'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\n"
                + "All mimsy were the borogoves,\nAnd the mome raths outgrabe.").getBytes(StandardCharsets.US_ASCII);
        assertEquals(127, jabberwocky.length);
        assertTag(hex("1c9240a5eb55d38af333888604f6b5f0 473917c1402b80099dca5cbc207075c0"), jabberwocky,
                "4541669a7eaaee61e708dc7cbcc5eb62");
        // #5: h reaches p
        assertTag(hex("02000000000000000000000000000000 00000000000000000000000000000000"),
                hex("ffffffffffffffffffffffffffffffff"), "03000000000000000000000000000000");
        // #6: h + s overflows 2^128
        assertTag(hex("02000000000000000000000000000000 ffffffffffffffffffffffffffffffff"),
                hex("02000000000000000000000000000000"), "03000000000000000000000000000000");
        // #7: h exceeds p after the last block
        assertTag(hex("01000000000000000000000000000000 00000000000000000000000000000000"),
                hex("ffffffffffffffffffffffffffffffff f0ffffffffffffffffffffffffffffff 11000000000000000000000000000000"),
                "05000000000000000000000000000000");
        // #8: h = 0 mod p
        assertTag(hex("01000000000000000000000000000000 00000000000000000000000000000000"),
                hex("ffffffffffffffffffffffffffffffff fbfefefefefefefefefefefefefefefe 01010101010101010101010101010101"),
                "00000000000000000000000000000000");
        // #9: h = p - 5 + 2^128 ... the final subtraction
        assertTag(hex("02000000000000000000000000000000 00000000000000000000000000000000"),
                hex("fdffffffffffffffffffffffffffffff"), "faffffffffffffffffffffffffffffff");
        // #10 and #11: carries through the 2^130 fold
        byte[] k10 = hex("01000000000000000400000000000000 00000000000000000000000000000000");
        assertTag(k10, hex("e33594d7505e43b90000000000000000 3394d7505e4379cd0100000000000000"
                + "00000000000000000000000000000000 01000000000000000000000000000000"), "14000000000000005500000000000000");
        assertTag(k10, hex("e33594d7505e43b90000000000000000 3394d7505e4379cd0100000000000000"
                + "00000000000000000000000000000000"), "13000000000000000000000000000000");
    }

    /**
     * Differential fuzz against Bouncy Castle's Poly1305 (an independent implementation): random one-time keys,
     * lengths 0..1100 and offsets; every fifth key forces carries. Also checks that a single flipped tag bit
     * fails {@link Poly1305#verify}. Seeded, so a failure names a reproducible case.
     */
    @Test
    void poly1305DifferentialAgainstBouncyCastle() {
        long seed = 0x5eed_1305L;
        Random rnd = new Random(seed);
        Poly1305 ours = new Poly1305();
        for (int t = 0; t < 20_000; t++) {
            byte[] key = new byte[32];
            rnd.nextBytes(key);
            if (t % 5 == 0) {
                java.util.Arrays.fill(key, 0, 16, (byte) 0xff);
                java.util.Arrays.fill(key, 16, 32, (byte) 0xff);
            }
            int len = t < 200 ? t : rnd.nextInt(1101);
            byte[] m = new byte[len];
            if (t % 7 == 0) {
                java.util.Arrays.fill(m, (byte) 0xff);
            } else {
                rnd.nextBytes(m);
            }
            int off = rnd.nextInt(17);
            byte[] shifted = new byte[off + len + 5];
            System.arraycopy(m, 0, shifted, off, len);
            byte[] tag = new byte[16];
            ours.mac(key, 0, shifted, off, len, tag, 0);
            byte[] reference = bouncyCastlePoly1305(key, m);
            if (!java.util.Arrays.equals(reference, tag)) {
                throw new AssertionError("seed " + seed + " case " + t + " len " + len + ": ours " + hex(tag)
                        + " BC " + hex(reference));
            }
        }
    }

    /**
     * The incremental form (full blocks, then padded remainder and lengths) equals textbook Poly1305 of the padded
     * message: both ways of reading the partial block, in place with random bytes after it (as an envelope's tag
     * follows its ciphertext: they must be masked off) and copied at the very end of the array.
     */
    @Test
    void incrementalPaddedFormEqualsTextbookOverTheRfc8439Layout() {
        Random rnd = new Random(11);
        Poly1305 mac = new Poly1305();
        for (int t = 0; t < 4000; t++) {
            byte[] key = new byte[32];
            rnd.nextBytes(key);
            byte[] header = new byte[16];
            rnd.nextBytes(header);
            byte[] ct = new byte[rnd.nextInt(300)];
            rnd.nextBytes(ct);
            long index = rnd.nextLong();
            byte[] env = envelope(header, ct, t % 2 == 0 ? 16 : 0, rnd);
            absorbEnvelope(mac, key, env, ct.length, index);
            byte[] tag = new byte[16];
            mac.finish(tag, 0);
            assertArrayEquals(bouncyCastlePoly1305(key, TestSupport.macInput(header, ct, index)), tag,
                    "ciphertext length " + ct.length + ", bytes after it " + (env.length - 16 - ct.length));
            absorbEnvelope(mac, key, env, ct.length, index);
            assertTrue(mac.verify(tag, 0));
            tag[rnd.nextInt(16)] ^= (byte) (1 << rnd.nextInt(8));
            absorbEnvelope(mac, key, env, ct.length, index);
            assertFalse(mac.verify(tag, 0));
        }
    }

    /** Header and ciphertext laid out as in an envelope, then {@code after} random bytes (where a tag would be). */
    private static byte[] envelope(byte[] header, byte[] ct, int after, Random rnd) {
        byte[] env = new byte[16 + ct.length + after];
        rnd.nextBytes(env);
        System.arraycopy(header, 0, env, 0, 16);
        System.arraycopy(ct, 0, env, 16, ct.length);
        return env;
    }

    /** What the sealer and opener do, on an envelope. */
    private static void absorbEnvelope(Poly1305 mac, byte[] key, byte[] env, int ctLength, long index) {
        int whole = ctLength & ~15;
        mac.init(key, 0);
        mac.absorbFull(env, 16, whole);
        mac.absorbTail(env, 16 + whole, ctLength - whole, index, Envelope.lengthWord(env, 0, ctLength));
    }

    /** Worst cases for carries: all-ones messages and r at its clamped maximum, against the BigInteger reference. */
    @Test
    void poly1305ExtremeValuesAgainstBigInteger() {
        byte[] rMax = hex("ffffffffffffffffffffffffffffffff");
        Poly1305 mac = new Poly1305();
        for (byte[] s : new byte[][] {new byte[16], hex("ffffffffffffffffffffffffffffffff")}) {
            byte[] key = new byte[32];
            System.arraycopy(rMax, 0, key, 0, 16);
            System.arraycopy(s, 0, key, 16, 16);
            for (int len = 0; len <= 80; len++) {
                byte[] m = new byte[len];
                java.util.Arrays.fill(m, (byte) 0xff);
                byte[] tag = new byte[16];
                mac.mac(key, 0, m, 0, len, tag, 0);
                assertArrayEquals(TestSupport.poly1305Reference(rMax, s, m), tag, "len " + len);
            }
        }
    }

    private static void assertTag(byte[] key32, byte[] msg, String expectedHex) {
        Poly1305 mac = new Poly1305();
        byte[] tag = new byte[16];
        mac.mac(key32, 0, msg, 0, msg.length, tag, 0);
        assertEquals(expectedHex, hex(tag));
        byte[] r = java.util.Arrays.copyOfRange(key32, 0, 16);
        byte[] s = java.util.Arrays.copyOfRange(key32, 16, 32);
        assertArrayEquals(TestSupport.poly1305Reference(r, s, msg), tag);
        assertArrayEquals(bouncyCastlePoly1305(key32, msg), tag);
    }

    /** Bouncy Castle's Poly1305 keyed with r || s (RFC 8439 key layout), an independent reference. */
    static byte[] bouncyCastlePoly1305(byte[] key32, byte[] m) {
        org.bouncycastle.crypto.macs.Poly1305 bc = new org.bouncycastle.crypto.macs.Poly1305();
        bc.init(new org.bouncycastle.crypto.params.KeyParameter(key32));
        bc.update(m, 0, m.length);
        byte[] out = new byte[16];
        bc.doFinal(out, 0);
        return out;
    }

    /** RFC 5869 test case 1 through the BC HKDF path QueueKey uses. */
    @Test
    void hkdfRfc5869TestCase1() {
        byte[] okm = QueueKey.hkdf(hex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"), hex("000102030405060708090a0b0c"),
                hex("f0f1f2f3f4f5f6f7f8f9"), 42);
        assertEquals("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865", hex(okm));
    }

    /** Format version, mode, queue name, incarnation and master key each change every derived key. */
    @Test
    void derivedKeysBindVersionModeNameIncarnationAndMasterKey() {
        MasterKey mk = MasterKey.of(1, hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"));
        byte[] inc = new byte[16];
        byte[] inc2 = inc.clone();
        inc2[15] = 1;
        Set<String> all = new HashSet<>();
        Set<Long> fingerprints = new HashSet<>();
        for (CipherMode mode : CipherMode.values()) {
            for (QueueIdentity q : new QueueIdentity[] {new QueueIdentity("orders", inc),
                    new QueueIdentity("orders2", inc), new QueueIdentity("orders", inc2)}) {
                QueueKey k = QueueKey.derive(mk, q, mode);
                assertTrue(all.add(hex(k.aesKey())), mode + " " + q);
                fingerprints.add(k.fingerprint());
            }
        }
        // the key check value depends on key and queue identity, not on the mode: 3 identities, 3 values
        assertEquals(3, fingerprints.size());
        QueueIdentity a = new QueueIdentity("orders", inc);
        QueueKey other = QueueKey.derive(MasterKey.of(1, new byte[16]), a, CipherMode.AES_128_CTR_POLY1305);
        assertTrue(all.add(hex(other.aesKey())));
        // deterministic: replicas with the same identity and master key derive the same keys
        assertArrayEquals(QueueKey.derive(mk, a, CipherMode.AES_128_CTR_POLY1305).aesKey(),
                QueueKey.derive(mk, new QueueIdentity("orders", inc), CipherMode.AES_128_CTR_POLY1305).aesKey());
        // the info string is exactly the documented one: format version 2, mode, purpose, name
        assertArrayEquals(QueueKey.hkdf(mk.material(), inc,
                        "queue-enterprise/v2/AES_128_CTR_POLY1305/aes-128/orders".getBytes(StandardCharsets.UTF_8), 16),
                QueueKey.derive(mk, a, CipherMode.AES_128_CTR_POLY1305).aesKey());
        assertNotEquals(hex(QueueKey.derive(mk, a, CipherMode.AES_128_CTR).aesKey()),
                hex(QueueKey.derive(mk, a, CipherMode.AES_128_CTR_POLY1305).aesKey()));
    }
}
