package io.queueenterprise.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** What closing an appender or tailer claims (docs/crypto.md, Keys): key material wiped, nothing usable after. */
@org.junit.jupiter.api.Tag("unit")
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
    /**
     * A key ring replaced by a reload is wiped (issue 19) while a sealer or opener may just have read it: deriving from
     * it must not yield a key made of zeroed bytes, nor fail, but take the ring the supplier hands out now.
     */
    @Test
    void aRingWipedWhileInUseIsReplacedByTheCurrentOne() {
        CipherMode mode = CipherMode.AES_128_CTR_POLY1305;
        byte[] material = new byte[32];
        new java.util.Random(19).nextBytes(material);
        KeyRing wiped = KeyRing.single(MasterKey.of(1, material));
        KeyRing current = KeyRing.single(MasterKey.of(1, material));
        wiped.key(1).destroy();
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        // The first read hands out the ring being wiped; every later read the ring that replaced it.
        java.util.function.Supplier<KeyRing> reloading = () -> calls.getAndIncrement() == 0 ? wiped : current;
        ExcerptSealer sealer = new ExcerptSealer(SealOpenTest.QUEUE, reloading, mode, CryptoEngine.JCE);
        byte[] env = new byte[8 + mode.overhead()];
        byte[] plain = {1, 2, 3, 4, 5, 6, 7, 8};
        System.arraycopy(plain, 0, env, Envelope.HEADER_LENGTH, 8);
        sealer.sealInPlace(3, env, 0, 8);
        calls.set(-1); // the opener reads the wiped ring twice (made, then first open), then the current one
        ExcerptOpener opener = new ExcerptOpener(SealOpenTest.QUEUE,
                () -> calls.getAndIncrement() <= 0 ? wiped : current, mode, CryptoEngine.JCE);
        byte[] copy = env.clone();
        assertEquals(8, opener.openInPlace(3, copy, 0, copy.length));
        assertArrayEquals(plain, Arrays.copyOfRange(copy, Envelope.HEADER_LENGTH, Envelope.HEADER_LENGTH + 8));
        // Sealed under the current key (not under zeroed bytes): an opener that only ever had the current ring agrees.
        ExcerptOpener check = new ExcerptOpener(SealOpenTest.QUEUE, current, mode, CryptoEngine.JCE);
        copy = env.clone();
        assertEquals(8, check.openInPlace(3, copy, 0, copy.length));
        assertArrayEquals(plain, Arrays.copyOfRange(copy, Envelope.HEADER_LENGTH, Envelope.HEADER_LENGTH + 8));
    }

    /** A ring destroyed by its owner but still handed out has no successor: the sealer and the opener say so. */
    @Test
    void aRingWipedButStillHandedOutIsRefused() {
        CipherMode mode = CipherMode.AES_128_CTR_POLY1305;
        byte[] material = new byte[32];
        new java.util.Random(19).nextBytes(material);
        KeyRing wiped = KeyRing.single(MasterKey.of(1, material));
        wiped.key(1).destroy();
        IllegalStateException sealing = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> new ExcerptSealer(SealOpenTest.QUEUE, () -> wiped, mode, CryptoEngine.JCE)
                        .sealInPlace(3, new byte[8 + mode.overhead()], 0, 8));
        assertEquals("MasterKey[id=1] has been destroyed", sealing.getMessage());
        byte[] env = new byte[8 + mode.overhead()];
        KeyRing live = KeyRing.single(MasterKey.of(1, material.clone()));
        new ExcerptSealer(SealOpenTest.QUEUE, live, mode, CryptoEngine.JCE).sealInPlace(3, env, 0, 8);
        IllegalStateException opening = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> new ExcerptOpener(SealOpenTest.QUEUE, () -> wiped, mode, CryptoEngine.JCE).openInPlace(3, env, 0, env.length));
        assertEquals("MasterKey[id=1] has been destroyed", opening.getMessage());
    }
}
