package io.queueenterprise.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The attack that broke envelope v1: a single repeated nonce revealed the queue-wide Poly1305 key r, and with
 * it an attacker forged an edit of ANY excerpt. Here two writers are forced onto one (epoch, sequence), the
 * leaked one-time key is used to forge edits, and the forgery works only on the excerpts that shared the
 * nonce: every other excerpt has its own one-time key.
 */
@org.junit.jupiter.api.Tag("unit")
class NonceReuseTest {
    static final CipherMode AUTH = CipherMode.AES_128_CTR_POLY1305;
    static final int H = Envelope.HEADER_LENGTH;
    static final long INDEX_A = 10;
    static final long INDEX_OTHER = 11;

    @Test
    void aRepeatedNonceExposesOnlyThePairThatSharesIt() throws Exception {
        long epoch = 0x8000_0000_1234_5678L;
        ExcerptSealer writer = new ExcerptSealer(SealOpenTest.QUEUE, ExcerptSealer.constant(SealOpenTest.RING), AUTH,
                CryptoEngine.JCE, TestSupport.fixedEpoch(epoch));
        ExcerptSealer forkedWriter = new ExcerptSealer(SealOpenTest.QUEUE, ExcerptSealer.constant(SealOpenTest.RING),
                AUTH, CryptoEngine.JCE, TestSupport.fixedEpoch(epoch)); // a fork: same epoch, same next sequence
        byte[] a = seal(writer, INDEX_A, "pay 100 to alice..................");
        byte[] other = seal(writer, INDEX_OTHER, "pay 200 to carol..................");
        byte[] forkA = seal(forkedWriter, INDEX_A, "pay 999 to bob....................");
        assertEquals(Envelope.sequence(a, 0), Envelope.sequence(forkA, 0));

        // What an attacker learns from the repeat: the XOR of the two plaintexts (confidentiality of that pair)...
        byte[] xorCt = xor(Arrays.copyOfRange(a, H, H + 34), Arrays.copyOfRange(forkA, H, H + 34));
        assertArrayEquals(xor(bytes("pay 100 to alice.................."), bytes("pay 999 to bob....................")), xorCt);
        // ...and, by solving the two tag equations, that nonce's one-time key (r, s). Taken here from the key.
        byte[] leakedOneTimeKey = oneTimeKey(epoch, Envelope.sequence(a, 0));

        ExcerptOpener reader = new ExcerptOpener(SealOpenTest.QUEUE, SealOpenTest.RING, AUTH, CryptoEngine.JCE);
        // Control: with the leaked key the attacker CAN forge an edit of an excerpt that used the repeated nonce
        // (so the forgery below is built right and this test can fail).
        byte[] forgedA = forgeEdit(a, INDEX_A, leakedOneTimeKey);
        assertEquals(34, reader.openInPlace(INDEX_A, forgedA.clone(), 0, forgedA.length));
        // The same forgery against any other excerpt fails: its one-time key is unrelated (v1 accepted it).
        byte[] forgedOther = forgeEdit(other, INDEX_OTHER, leakedOneTimeKey);
        assertEquals(EnvelopeException.Reason.AUTHENTICATION_FAILED, assertThrows(EnvelopeException.class,
                () -> reader.openInPlace(INDEX_OTHER, forgedOther, 0, forgedOther.length)).reason());
    }

    private static byte[] seal(ExcerptSealer sealer, long index, String text) {
        byte[] plain = bytes(text);
        byte[] env = new byte[plain.length + AUTH.overhead()];
        System.arraycopy(plain, 0, env, H, plain.length);
        sealer.sealInPlace(index, env, 0, plain.length);
        return env;
    }

    /**
     * Flips one ciphertext bit and fixes up the tag with a one-time key: tag' = tag - h_r(m) + h_r(m') mod 2^128,
     * which is right exactly when r (and so s) is the key the envelope was sealed with.
     */
    private static byte[] forgeEdit(byte[] env, long index, byte[] oneTimeKey) {
        int ctLen = env.length - AUTH.overhead();
        byte[] forged = env.clone();
        forged[H] ^= 0x01;
        byte[] r = Arrays.copyOfRange(oneTimeKey, 0, 16);
        BigInteger h = polynomial(r, env, ctLen, index);
        BigInteger h2 = polynomial(r, forged, ctLen, index);
        BigInteger tag = TestSupport.le(env, H + ctLen, 16);
        byte[] newTag = TestSupport.le16(tag.subtract(h).add(h2));
        System.arraycopy(newTag, 0, forged, H + ctLen, 16);
        return forged;
    }

    /** h_r(m) mod 2^128, the Poly1305 polynomial without s, over the envelope's authenticator input. */
    private static BigInteger polynomial(byte[] r, byte[] env, int ctLen, long index) {
        byte[] input = TestSupport.macInput(Arrays.copyOfRange(env, 0, H), Arrays.copyOfRange(env, H, H + ctLen), index);
        return TestSupport.le(TestSupport.poly1305Reference(r, new byte[16], input), 0, 16);
    }

    private static byte[] oneTimeKey(long epoch, int sequence) throws Exception {
        byte[] aes = QueueKey.derive(SealOpenTest.KEY1, SealOpenTest.QUEUE, AUTH).aesKey();
        byte[] key = new byte[32];
        System.arraycopy(TestSupport.jdkAesBlock(aes, TestSupport.counterBlock(epoch, sequence, 0)), 0, key, 0, 16);
        System.arraycopy(TestSupport.jdkAesBlock(aes, TestSupport.counterBlock(epoch, sequence, 1)), 0, key, 16, 16);
        return key;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] xor(byte[] x, byte[] y) {
        byte[] out = new byte[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = (byte) (x[i] ^ y[i]);
        }
        return out;
    }
}
