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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

class KnownAnswerTest {

    // NIST SP 800-38A, F.5.1 CTR-AES128.Encrypt
    static final byte[] NIST_KEY = hex("2b7e151628aed2a6abf7158809cf4f3c");
    static final byte[] NIST_PLAIN = hex("6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51"
            + "30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710");
    static final byte[] NIST_CIPHER = hex("874d6191b620e3261bef6864990db6ce 9806f66b7970fdff8617187bb9fffdff"
            + "5ae4df3edbd5d35e5b4f09020db03eab 1e031dda2fbe03d1792170a0f3009cee");

    @ParameterizedTest
    @EnumSource(CryptoEngine.class)
    void nistSp800_38a_f51_ctrAes128EncryptThroughEngineAndXorPath(CryptoEngine engine) {
        AesBlockFunction aes = engine.newBlockFunction(NIST_KEY);
        // initial counter f0f1f2f3f4f5f6f7 f8f9fafb fcfdfeff: hi || mid || 32-bit block counter
        for (int len : new int[] {64, 63, 40, 17, 16, 1}) {
            byte[] buf = new byte[len + 3];
            System.arraycopy(NIST_PLAIN, 0, buf, 3, len);
            CtrKeystream ctr = new CtrKeystream();
            ctr.begin(aes, 0xf0f1f2f3f4f5f6f7L, 0xf8f9fafb, 0xfcfdfeff, len, null);
            ctr.finish(aes, 0xf0f1f2f3f4f5f6f7L, 0xf8f9fafb, 0xfcfdfeff, buf, 3, len);
            byte[] expected = new byte[len + 3];
            System.arraycopy(NIST_CIPHER, 0, expected, 3, len);
            assertArrayEquals(expected, buf, engine + " len " + len);
        }
        // Raw block function: the first NIST output block is AES(counter block f0..ff)
        byte[] ks = new byte[16];
        aes.encryptBlocks(hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"), 0, ks, 0, 1);
        byte[] first = new byte[16];
        for (int i = 0; i < 16; i++) {
            first[i] = (byte) (NIST_PLAIN[i] ^ NIST_CIPHER[i]);
        }
        assertArrayEquals(first, ks);
    }

    @ParameterizedTest
    @EnumSource(CryptoEngine.class)
    void padBlockIsCounterZeroAndKeystreamStartsAtCounterOne(CryptoEngine engine) throws Exception {
        byte[] key = hex("000102030405060708090a0b0c0d0e0f");
        AesBlockFunction aes = engine.newBlockFunction(key);
        Random rnd = new Random(7);
        for (int len : new int[] {0, 1, 15, 16, 17, 4079, 4080, 4081, 4095, 4096, 4097, 8192, 12345}) {
            long index = rnd.nextLong();
            int salt = rnd.nextInt();
            byte[] plain = new byte[len];
            rnd.nextBytes(plain);
            byte[] buf = plain.clone();
            byte[] pad = new byte[16];
            CtrKeystream ctr = new CtrKeystream();
            ctr.begin(aes, index, salt, 1, len, pad);
            ctr.finish(aes, index, salt, 1, buf, 0, len);
            assertArrayEquals(TestSupport.jdkCtr(key, TestSupport.counterBlock(index, salt, 1), plain), buf,
                    "len " + len);
            assertArrayEquals(TestSupport.jdkAesBlock(key, TestSupport.counterBlock(index, salt, 0)), pad);
        }
    }

    /** RFC 8439 §2.5.2, through the r-fixed Poly1305 plus externally added s. */
    @Test
    void rfc8439Section252() {
        byte[] key = hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
        byte[] msg = "Cryptographic Forum Research Group".getBytes(StandardCharsets.US_ASCII);
        assertTag(key, msg, "a8061dc1305136c6c22b8baf0c0127a9");
    }

    /** RFC 8439 Appendix A.3 vectors #1, #2 (r = 0: tag = s whatever the text), #5, #6 (s addition wraps). */
    @Test
    void rfc8439AppendixA3() {
        assertTag(new byte[32], new byte[64], "00000000000000000000000000000000");
        byte[] k2 = hex("00000000000000000000000000000000 36e5f6b5c5e06070f0efca96227a863e");
        assertTag(k2, new byte[375], "36e5f6b5c5e06070f0efca96227a863e");
        byte[] k5 = hex("02000000000000000000000000000000 00000000000000000000000000000000");
        assertTag(k5, hex("ffffffffffffffffffffffffffffffff"), "03000000000000000000000000000000");
        byte[] k6 = hex("02000000000000000000000000000000 ffffffffffffffffffffffffffffffff");
        assertTag(k6, hex("02000000000000000000000000000000"), "03000000000000000000000000000000");
    }

    /** Bernstein, "The Poly1305-AES message-authentication code" (2005), appendix B, first example. */
    @ParameterizedTest
    @EnumSource(CryptoEngine.class)
    void poly1305AesBernsteinExample(CryptoEngine engine) {
        byte[] k = hex("ec074c835580741701425b623235add6");
        byte[] r = hex("851fc40c3467ac0be05cc20404f3f700");
        byte[] n = hex("fb447350c4e868c52ac3275cf9d4327e");
        byte[] pad = new byte[16];
        engine.newBlockFunction(k).encryptBlocks(n, 0, pad, 0, 1);
        assertEquals("580b3b0f9447bb1e69d095b5928b6dbc", hex(pad));
        byte[] tag = new byte[16];
        byte[] m = hex("f3f6");
        new Poly1305Aes(r).tag(m, 0, 1, m, 1, 1, pad, tag, 0);
        assertEquals("f4c633c3044fc145f84f335cb81953de", hex(tag));
    }

    /** Random keys and lengths against the BigInteger textbook Poly1305; split points vary. */
    @Test
    void poly1305MatchesBigIntegerReference() {
        Random rnd = new Random(42);
        for (int t = 0; t < 300; t++) {
            byte[] r = new byte[16];
            byte[] s = new byte[16];
            rnd.nextBytes(r);
            rnd.nextBytes(s);
            if (t % 10 == 0) {
                java.util.Arrays.fill(s, (byte) 0xff); // force carries in the 128-bit add
            }
            byte[] m = new byte[rnd.nextInt(300)];
            rnd.nextBytes(m);
            int split = m.length == 0 ? 0 : rnd.nextInt(m.length + 1);
            byte[] tag = new byte[16];
            Poly1305Aes mac = new Poly1305Aes(r);
            mac.tag(m, 0, split, m, split, m.length - split, s, tag, 0);
            assertArrayEquals(TestSupport.poly1305Reference(r, s, m), tag);
            assertTrue(mac.verify(m, 0, m.length, s, tag, 0));
            tag[rnd.nextInt(16)] ^= (byte) (1 << rnd.nextInt(8));
            assertFalse(mac.verify(m, 0, m.length, s, tag, 0));
        }
    }

    private static void assertTag(byte[] key32, byte[] msg, String expectedHex) {
        byte[] r = java.util.Arrays.copyOfRange(key32, 0, 16);
        byte[] s = java.util.Arrays.copyOfRange(key32, 16, 32);
        Poly1305Aes mac = new Poly1305Aes(r);
        byte[] tag = new byte[16];
        mac.tag(msg, 0, msg.length / 3, msg, msg.length / 3, msg.length - msg.length / 3, s, tag, 0);
        assertEquals(expectedHex, hex(tag));
        // the same instance is reusable: the second computation gives the same tag
        byte[] again = new byte[16];
        mac.tag(msg, 0, 0, msg, 0, msg.length, s, again, 0);
        assertEquals(expectedHex, hex(again));
        assertArrayEquals(TestSupport.poly1305Reference(r, s, msg), tag);
    }

    @Test
    void add128WrapsModulo2To128() {
        byte[] out = new byte[16];
        byte[] ones = hex("ffffffffffffffffffffffffffffffff");
        byte[] one = hex("01000000000000000000000000000000");
        Poly1305Aes.add128(ones, one, out, 0);
        assertEquals("00000000000000000000000000000000", hex(out));
        byte[] lowOnes = hex("ffffffffffffffff0000000000000000");
        Poly1305Aes.add128(lowOnes, one, out, 0);
        assertEquals("00000000000000000100000000000000", hex(out));
    }

    /** RFC 5869 test case 1 through the BC HKDF path QueueKey uses. */
    @Test
    void hkdfRfc5869TestCase1() {
        byte[] okm = QueueKey.hkdf(hex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"), hex("000102030405060708090a0b0c"),
                hex("f0f1f2f3f4f5f6f7f8f9"), 42);
        assertEquals("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865", hex(okm));
    }

    @Test
    void derivedKeysDifferPerQueueNameIncarnationPurposeAndMasterKey() {
        MasterKey mk = MasterKey.of(1, hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"));
        byte[] inc = new byte[16];
        QueueIdentity a = new QueueIdentity("orders", inc);
        QueueIdentity b = new QueueIdentity("orders2", inc);
        byte[] inc2 = inc.clone();
        inc2[15] = 1;
        QueueIdentity a2 = new QueueIdentity("orders", inc2);
        Set<String> all = new HashSet<>();
        for (QueueIdentity q : new QueueIdentity[] {a, b, a2}) {
            QueueKey k = QueueKey.derive(mk, q);
            assertTrue(all.add(hex(k.aesKey())));
            assertTrue(all.add(hex(k.poly1305R())));
            assertTrue(all.add(Long.toHexString(k.fingerprint())));
        }
        QueueKey other = QueueKey.derive(MasterKey.of(1, new byte[16]), a);
        assertTrue(all.add(hex(other.aesKey())));
        assertNotEquals(QueueKey.derive(mk, a).fingerprint(), other.fingerprint());
        // deterministic: replicas with the same identity and master key derive the same keys
        assertArrayEquals(QueueKey.derive(mk, a).aesKey(), QueueKey.derive(mk, new QueueIdentity("orders", inc)).aesKey());
        // the info string is exactly the documented one
        assertArrayEquals(QueueKey.hkdf(mk.material(), inc,
                        "queue-enterprise/v1/aes-128/orders".getBytes(StandardCharsets.UTF_8), 16),
                QueueKey.derive(mk, a).aesKey());
    }
}
