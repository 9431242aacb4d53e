package io.queueenterprise.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** What closing an appender or tailer claims (docs/crypto.md, Keys): key material wiped, nothing usable after. */
class DestroyTest {

    @Test
    void wipingForgetsEveryPrecomputedKeystreamByte() {
        NonceKeystream keystream = new NonceKeystream(true);
        AesBlockFunction aes = CryptoEngine.JCE.newBlockFunction(new byte[16]);
        keystream.locate(aes, 42, 0, 40);
        byte[] precomputed = keystream.oneTimeKey();
        assertTrue(Arrays.mismatch(precomputed, new byte[precomputed.length]) >= 0, "control: a batch was computed");
        keystream.wipe();
        assertArrayEquals(new byte[precomputed.length], precomputed);
    }

    @Test
    void aDestroyedSealerOrOpenerRefusesToWork() {
        CipherMode mode = CipherMode.AES_128_CTR_POLY1305;
        ExcerptSealer sealer = new ExcerptSealer(SealOpenTest.QUEUE, SealOpenTest.RING, mode, CryptoEngine.JCE);
        ExcerptOpener opener = new ExcerptOpener(SealOpenTest.QUEUE, SealOpenTest.RING, mode, CryptoEngine.JCE);
        byte[] env = new byte[8 + mode.overhead()];
        sealer.sealInPlace(1, env, 0, 8);
        opener.verify(1, env, 0, env.length);
        sealer.destroy();
        opener.destroy();
        assertThrows(IllegalStateException.class, () -> sealer.sealInPlace(2, env, 0, 8));
        assertThrows(IllegalStateException.class, () -> opener.verify(1, env, 0, env.length));
    }
}
