package io.queueenterprise.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.queueenterprise.crypto.EnvelopeException.Reason;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The paths that work on native memory, against the array paths:
 * {@link ExcerptOpener#openFromMemory}, the one-pass open the queue library runs over the mapped file (the same
 * plaintext as {@link ExcerptOpener#openInPlace} at every size, past the precomputed keystream too, and in the
 * authenticated mode the same refusals, with the caller's plaintext range zeroed on each); and
 * {@link ExcerptSealer#sealToMemory}, the CTR seal into the library's direct staging buffer (the same bytes as
 * {@link ExcerptSealer#sealInPlace} under the same nonce). The memory is allocated here, as a mapped file would be.
 */
@org.junit.jupiter.api.Tag("unit")
class MemoryPathsTest {
    private static final int CAPACITY = 1 << 22;
    /** Where a native destination lies: past any envelope the tests put at {@code memory}. */
    private static final int NATIVE_DESTINATION = CAPACITY / 2;
    private static final byte UNTOUCHED = 0x5A;
    private long memory;

    @BeforeEach
    void allocate() {
        memory = NativeMemory.allocate(CAPACITY);
    }

    @AfterEach
    void free() {
        NativeMemory.free(memory);
    }

    @ParameterizedTest
    @MethodSource("io.queueenterprise.crypto.SealOpenTest#modesAndEngines")
    void opensWhatTheArrayPathOpensAtEverySize(CipherMode mode, CryptoEngine engine) {
        ExcerptSealer sealer = new ExcerptSealer(SealOpenTest.QUEUE, SealOpenTest.RING, mode, engine);
        ExcerptOpener fromMemory = new ExcerptOpener(SealOpenTest.QUEUE, SealOpenTest.RING, mode, engine);
        ExcerptOpener fromArray = new ExcerptOpener(SealOpenTest.QUEUE, SealOpenTest.RING, mode, engine);
        Random rnd = new Random(5);
        long index = 0x4a1b_0000_0000L;
        for (int size : SealOpenTest.sizes()) {
            byte[] plain = new byte[size];
            rnd.nextBytes(plain);
            byte[] env = new byte[Envelope.sealedLength(mode, size)];
            System.arraycopy(plain, 0, env, Envelope.PAYLOAD_OFFSET, size);
            int envLength = rnd.nextBoolean() ? sealer.sealInPlace(++index, env, 0, size) : sealer.sealUnbound(env, 0, size);
            put(env);
            byte[] dst = new byte[size + 7];
            assertEquals(size, open(fromMemory, index, envLength, dst, 3, size % 2 == 1), "size " + size);
            assertArrayEquals(plain, Arrays.copyOfRange(dst, 3, 3 + size), "size " + size);
            assertEquals(size, fromArray.openInPlace(index, env, 0, envLength));
            assertArrayEquals(plain, Arrays.copyOfRange(env, Envelope.PAYLOAD_OFFSET, Envelope.PAYLOAD_OFFSET + size));
        }
    }

    @ParameterizedTest
    @EnumSource(CryptoEngine.class)
    void sealToMemoryWritesTheBytesSealInPlaceWritesUnderTheSameNonce(CryptoEngine engine) {
        CipherMode mode = CipherMode.AES_128_CTR;
        long epoch = 0x8123_4567_89ab_cdefL;
        ExcerptSealer toMemory = new ExcerptSealer(SealOpenTest.QUEUE, ExcerptSealer.constant(SealOpenTest.RING), mode,
                engine, TestSupport.fixedEpoch(epoch));
        ExcerptSealer inPlace = new ExcerptSealer(SealOpenTest.QUEUE, ExcerptSealer.constant(SealOpenTest.RING), mode,
                engine, TestSupport.fixedEpoch(epoch));
        long source = memory + CAPACITY / 4;
        Random rnd = new Random(8);
        int n = 0;
        for (int size : SealOpenTest.sizes()) {
            if (size > CAPACITY / 4 - 64) {
                continue;
            }
            byte[] plain = new byte[size];
            rnd.nextBytes(plain);
            byte[] expected = new byte[Envelope.sealedLength(mode, size)];
            System.arraycopy(plain, 0, expected, Envelope.PAYLOAD_OFFSET, size);
            int length = inPlace.sealInPlace(0, expected, 0, size);
            int sealed;
            if (n++ % 2 == 0) {
                sealed = toMemory.sealToMemory(plain, 0, size, memory);
            } else {
                NativeMemory.copy(plain, 0, source, size);
                sealed = toMemory.sealToMemory(source, size, memory);
            }
            assertEquals(length, sealed);
            byte[] actual = new byte[sealed];
            NativeMemory.copy(memory, actual, 0, sealed);
            assertArrayEquals(expected, actual, "size " + size);
        }
        ExcerptSealer authenticated = new ExcerptSealer(SealOpenTest.QUEUE, SealOpenTest.RING,
                CipherMode.AES_128_CTR_POLY1305, engine);
        // wrong values, as a caller might pass them: refused before anything is written
        ExcerptSealer ctr = new ExcerptSealer(SealOpenTest.QUEUE, SealOpenTest.RING, mode, engine);
        assertThrows(IndexOutOfBoundsException.class, () -> ctr.sealToMemory(new byte[8], 0, -1, memory));
        assertThrows(IndexOutOfBoundsException.class, () -> ctr.sealToMemory(new byte[8], 4, 8, memory));
        assertThrows(IllegalArgumentException.class, () -> ctr.sealToMemory(source, -1, memory));
        IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> authenticated.sealToMemory(new byte[8], 0, 8, memory));
        assertTrue(refused.getMessage().contains("binds the index"), refused.getMessage());
    }

    @ParameterizedTest
    @EnumSource(CryptoEngine.class)
    void everyFlippedBitIsRefusedAndNoPlaintextIsLeftInTheCallersArray(CryptoEngine engine) {
        CipherMode mode = CipherMode.AES_128_CTR_POLY1305;
        ExcerptSealer sealer = new ExcerptSealer(SealOpenTest.QUEUE, SealOpenTest.RING, mode, engine);
        ExcerptOpener opener = new ExcerptOpener(SealOpenTest.QUEUE, SealOpenTest.RING, mode, engine);
        for (int size : new int[]{0, 5, 16, 40, 300}) {
            byte[] plain = new byte[size];
            Arrays.fill(plain, (byte) 'p');
            byte[] env = new byte[Envelope.sealedLength(mode, size)];
            System.arraycopy(plain, 0, env, Envelope.PAYLOAD_OFFSET, size);
            long index = 77 + size;
            int envLength = sealer.sealInPlace(index, env, 0, size);
            for (int bit = 0; bit < envLength * 8; bit++) {
                byte[] tampered = env.clone();
                tampered[bit / 8] ^= (byte) (1 << (bit % 8));
                put(tampered);
                byte[] dst = new byte[size + 8];
                Arrays.fill(dst, UNTOUCHED);
                boolean toNative = bit % 2 == 1;
                assertThrows(EnvelopeException.class, () -> open(opener, index, envLength, dst, 4, toNative),
                        "size " + size + " bit " + bit);
                assertNoPlaintext(dst, 4, size, "size " + size + " bit " + bit);
            }
            put(env);
            byte[] dst = new byte[size + 8];
            Arrays.fill(dst, UNTOUCHED);
            EnvelopeException moved = assertThrows(EnvelopeException.class,
                    () -> open(opener, index + 1, envLength, dst, 4, true));
            assertEquals(Reason.AUTHENTICATION_FAILED, moved.reason(), "an index-bound excerpt at another index");
            assertNoPlaintext(dst, 4, size, "moved");
            assertEquals(size, opener.openFromMemory(index, memory, envLength, dst, 4));
            assertArrayEquals(plain, Arrays.copyOfRange(dst, 4, 4 + size));
        }
    }

    @ParameterizedTest
    @EnumSource(CryptoEngine.class)
    void aReplayedUnboundEnvelopeIsRefusedAndWiped(CryptoEngine engine) {
        CipherMode mode = CipherMode.AES_128_CTR_POLY1305;
        ExcerptSealer sealer = new ExcerptSealer(SealOpenTest.QUEUE, SealOpenTest.RING, mode, engine);
        ExcerptOpener opener = new ExcerptOpener(SealOpenTest.QUEUE, SealOpenTest.RING, mode, engine);
        byte[] env = new byte[Envelope.sealedLength(mode, 40)];
        Arrays.fill(env, Envelope.PAYLOAD_OFFSET, Envelope.PAYLOAD_OFFSET + 40, (byte) 'r');
        int envLength = sealer.sealUnbound(env, 0, 40);
        put(env);
        byte[] dst = new byte[40];
        assertEquals(40, opener.openFromMemory(9, memory, envLength, dst, 0));
        Arrays.fill(dst, UNTOUCHED);
        EnvelopeException replayed = assertThrows(EnvelopeException.class,
                () -> opener.openFromMemory(10, memory, envLength, dst, 0));
        assertEquals(Reason.REPLAYED_OR_REORDERED, replayed.reason());
        assertNoPlaintext(dst, 0, 40, "replayed");
    }

    @ParameterizedTest
    @EnumSource(CipherMode.class)
    void aTruncatedOrForeignEnvelopeIsRefusedBeforeAnythingIsWritten(CipherMode mode) {
        ExcerptOpener opener = new ExcerptOpener(SealOpenTest.QUEUE, SealOpenTest.RING, mode, CryptoEngine.JCE);
        ExcerptSealer other = new ExcerptSealer(SealOpenTest.QUEUE, SealOpenTest.RING,
                mode == CipherMode.AES_128_CTR ? CipherMode.AES_128_CTR_POLY1305 : CipherMode.AES_128_CTR, CryptoEngine.JCE);
        byte[] env = new byte[64];
        int envLength = other.sealInPlace(1, env, 0, 8);
        put(env);
        byte[] dst = new byte[64];
        Arrays.fill(dst, UNTOUCHED);
        assertEquals(Reason.MODE_MISMATCH, assertThrows(EnvelopeException.class,
                () -> opener.openFromMemory(1, memory, envLength, dst, 0)).reason());
        assertEquals(Reason.TRUNCATED, assertThrows(EnvelopeException.class,
                () -> opener.openFromMemory(1, memory, Envelope.HEADER_LENGTH - 1, dst, 0)).reason());
        for (byte b : dst) {
            assertEquals(UNTOUCHED, b);
        }
        ExcerptSealer own = new ExcerptSealer(SealOpenTest.QUEUE, SealOpenTest.RING, mode, CryptoEngine.JCE);
        byte[] large = new byte[Envelope.sealedLength(mode, 900)];
        int largeLength = own.sealInPlace(2, large, 0, 900);
        put(large);
        assertThrows(IndexOutOfBoundsException.class, () -> opener.openFromMemory(2, memory, largeLength, new byte[10], 0),
                "a destination too small is refused before anything is read past the header");
        assertThrows(IndexOutOfBoundsException.class,
                () -> opener.openFromMemory(2, memory, largeLength, memory + NATIVE_DESTINATION, 899),
                "a native destination one byte short is refused");
        assertThrows(IndexOutOfBoundsException.class,
                () -> opener.openFromMemory(2, memory, largeLength, memory + NATIVE_DESTINATION, -1));
        assertEquals(Reason.TRUNCATED, assertThrows(EnvelopeException.class,
                () -> opener.openFromMemory(2, memory, -5, new byte[10], 0)).reason(), "a negative length");
    }

    /**
     * Opens the envelope at {@code memory} into {@code dst[off ..]}, or through a native destination that starts
     * with a copy of {@code dst} and is copied back into it, whatever the outcome.
     */
    private int open(ExcerptOpener opener, long index, int envLength, byte[] dst, int off, boolean toNative) {
        if (!toNative) {
            return opener.openFromMemory(index, memory, envLength, dst, off);
        }
        long target = memory + NATIVE_DESTINATION;
        NativeMemory.copy(dst, 0, target, dst.length);
        try {
            return opener.openFromMemory(index, memory, envLength, target + off, dst.length - off);
        } finally {
            NativeMemory.copy(target, dst, 0, dst.length);
        }
    }

    /** The plaintext range holds zeros (wiped after the pass) or was never written; never plaintext. */
    private static void assertNoPlaintext(byte[] dst, int off, int size, String what) {
        boolean wiped = true;
        boolean untouched = true;
        for (int i = off; i < off + size; i++) {
            wiped &= dst[i] == 0;
            untouched &= dst[i] == UNTOUCHED;
        }
        assertTrue(wiped || untouched, what + ": " + TestSupport.hex(dst));
        for (int i = 0; i < dst.length; i++) {
            if (i < off || i >= off + size) {
                assertEquals(UNTOUCHED, dst[i], what + ": byte " + i + " outside the plaintext range was written");
            }
        }
        assertFalse(size > 0 && new String(dst).contains("pp"), what);
    }

    private void put(byte[] env) {
        NativeMemory.copy(env, 0, memory, env.length);
    }

}
