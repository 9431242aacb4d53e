package io.queueenterprise.crypto;

import java.security.GeneralSecurityException;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;
import org.bouncycastle.crypto.MultiBlockCipher;
import org.bouncycastle.crypto.engines.AESEngine;
import org.bouncycastle.crypto.params.KeyParameter;

/** Which AES implementation computes the keystream and the Poly1305 pad. */
public enum CryptoEngine {
    /**
     * JDK provider: one {@code AES/ECB/NoPadding} cipher initialised once per key; each call is a single
     * {@code Cipher.update} over all counter blocks (the JIT's AES-NI intrinsic per block).
     */
    JCE {
        @Override
        public AesBlockFunction newBlockFunction(byte[] aesKey) {
            return new JceBlockFunction(aesKey);
        }
    },
    /** Bouncy Castle's {@code AESEngine} (pure Java table implementation), {@code processBlocks}. */
    BOUNCY_CASTLE {
        @Override
        public AesBlockFunction newBlockFunction(byte[] aesKey) {
            return new BcBlockFunction(aesKey);
        }
    };

    /** A new block function keyed with {@code aesKey} (16 bytes; the array is not retained). */
    public abstract AesBlockFunction newBlockFunction(byte[] aesKey);

    private static void checkKey(byte[] aesKey) {
        if (aesKey.length != 16) {
            throw new IllegalArgumentException("AES-128 key must be 16 bytes, got " + aesKey.length);
        }
    }

    private static final class JceBlockFunction implements AesBlockFunction {
        private final Cipher cipher;

        JceBlockFunction(byte[] aesKey) {
            checkKey(aesKey);
            try {
                cipher = Cipher.getInstance("AES/ECB/NoPadding");
                cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(aesKey, "AES"));
            } catch (GeneralSecurityException e) {
                throw new QueueCryptoException("JCE AES/ECB/NoPadding unavailable: " + e.getClass().getSimpleName());
            }
        }

        @Override
        public void encryptBlocks(byte[] in, int inOff, byte[] out, int outOff, int blocks) {
            int len = blocks * BLOCK_SIZE;
            int done;
            try {
                done = cipher.update(in, inOff, len, out, outOff);
            } catch (GeneralSecurityException e) {
                throw new QueueCryptoException("JCE AES failed: " + e.getClass().getSimpleName());
            }
            if (done != len) {
                throw new IllegalStateException("JCE ECB produced " + done + " bytes, expected " + len);
            }
        }

        @Override
        public CryptoEngine engine() {
            return JCE;
        }
    }

    private static final class BcBlockFunction implements AesBlockFunction {
        private final MultiBlockCipher aes;

        BcBlockFunction(byte[] aesKey) {
            checkKey(aesKey);
            aes = AESEngine.newInstance();
            aes.init(true, new KeyParameter(aesKey));
        }

        @Override
        public void encryptBlocks(byte[] in, int inOff, byte[] out, int outOff, int blocks) {
            aes.processBlocks(in, inOff, blocks, out, outOff);
        }

        @Override
        public CryptoEngine engine() {
            return BOUNCY_CASTLE;
        }
    }
}
