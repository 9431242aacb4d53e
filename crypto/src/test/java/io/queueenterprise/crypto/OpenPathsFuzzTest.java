package io.queueenterprise.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Differential fuzzing of the two ways to open an envelope: the one pass over native memory
 * ({@link ExcerptOpener#openFromMemory}, the library's tailer over the mapped file) and the private-copy path
 * ({@link ExcerptOpener#verify} + {@link ExcerptOpener#decryptTo}). For any bytes and any length they agree: the same
 * plaintext, or the same {@link EnvelopeException} reason; the one pass leaves no plaintext behind a refusal and
 * writes nothing outside the plaintext range; nothing else is ever thrown. The memory path reads an exact-size
 * native copy of the input, so it is given no bytes past the envelope to lean on.
 */
@org.junit.jupiter.api.Tag("unit")
class OpenPathsFuzzTest {
    private static final byte CANARY = 0x5A;

    /**
     * Jazzer: in the suite, regression mode over the committed seeds (valid envelopes of both modes, in
     * src/test/resources/.../OpenPathsFuzzTestInputs); with JAZZER_FUZZ=1, coverage-guided fuzzing for maxDuration.
     * The first input byte picks the mode and whether the index is the one the seeds were sealed at.
     */
    @FuzzTest(maxDuration = "10s")
    void bothOpenPathsAgreeOnAnyInput(byte[] input) {
        if (input.length == 0) {
            return;
        }
        CipherMode mode = (input[0] & 1) == 0 ? CipherMode.AES_128_CTR : CipherMode.AES_128_CTR_POLY1305;
        long index = (input[0] & 2) == 0 ? SEED_INDEX : SEED_INDEX + 1;
        agree(mode, index, Arrays.copyOfRange(input, 1, input.length));
    }

    /**
     * The same property without a fuzzing engine: 200,000 seeded mutants of valid envelopes (bit flips, overwritten
     * bytes, truncation, extension), each opened both ways. A few mutants still open (CTR has no tag).
     */
    @Test
    void seededMutantsOfValidEnvelopesOpenAlikeBothWays() {
        long seed = Long.getLong("qe.fuzz.seed", System.nanoTime());
        SplittableRandom random = new SplittableRandom(seed);
        List<byte[]> samples = new ArrayList<>();
        for (CipherMode mode : CipherMode.values()) {
            for (int size : new int[]{0, 1, 8, 15, 16, 17, 40, 255, 256, 300}) {
                samples.add(seal(mode, size));
            }
        }
        for (int i = 0; i < 200_000; i++) {
            byte[] sample = samples.get(random.nextInt(samples.size()));
            CipherMode mode = CipherMode.fromWireCode(sample[Envelope.MODE_OFFSET] & 0x0F);
            byte[] mutant = Arrays.copyOf(sample, Math.max(0, sample.length + (random.nextInt(4) == 0 ? random.nextInt(-8, 9) : 0)));
            int mutations = random.nextInt(3);
            for (int m = 0; m < mutations && mutant.length > 0; m++) {
                int at = random.nextInt(mutant.length);
                if (random.nextBoolean()) {
                    mutant[at] ^= (byte) (1 << random.nextInt(8));
                } else {
                    mutant[at] = (byte) random.nextInt(256);
                }
            }
            try {
                agree(mode, SEED_INDEX, mutant);
            } catch (AssertionError e) {
                throw new AssertionError("seed " + seed + " (replay with -Dqe.fuzz.seed=" + seed + "), mutant " + i
                        + ": " + e.getMessage(), e);
            }
        }
    }

    static final long SEED_INDEX = 0x0001_2345_0000_0007L;
    private static final long EPOCH = 0x8000_0000_0000_0abcL;

    /** A valid envelope: sealed at {@link #SEED_INDEX} in the authenticated mode, with a fixed epoch and sequence 0. */
    static byte[] seal(CipherMode mode, int size) {
        ExcerptSealer sealer = new ExcerptSealer(SealOpenTest.QUEUE, ExcerptSealer.constant(SealOpenTest.RING), mode,
                CryptoEngine.JCE, TestSupport.fixedEpoch(EPOCH));
        byte[] env = new byte[Envelope.sealedLength(mode, size)];
        for (int i = 0; i < size; i++) {
            env[Envelope.PAYLOAD_OFFSET + i] = (byte) ('a' + i % 26);
        }
        sealer.sealInPlace(SEED_INDEX, env, 0, size);
        return env;
    }

    /**
     * One opener per path and mode, reused (deriving keys per input would dominate the run): both see the same
     * inputs, so their writer-order memories stay in step.
     */
    private static final ExcerptOpener[] FROM_ARRAY = openers();
    private static final ExcerptOpener[] FROM_MEMORY = openers();

    private static ExcerptOpener[] openers() {
        ExcerptOpener[] out = new ExcerptOpener[CipherMode.values().length];
        for (CipherMode mode : CipherMode.values()) {
            out[mode.ordinal()] = new ExcerptOpener(SealOpenTest.QUEUE, SealOpenTest.RING, mode, CryptoEngine.JCE);
        }
        return out;
    }

    private static void agree(CipherMode mode, long index, byte[] env) {
        ExcerptOpener fromArray = FROM_ARRAY[mode.ordinal()];
        ExcerptOpener fromMemory = FROM_MEMORY[mode.ordinal()];
        byte[] expected = null;
        EnvelopeException.Reason expectedRefusal = null;
        byte[] copy = env.clone();
        try {
            int length = fromArray.verify(index, copy, 0, copy.length);
            expected = new byte[length];
            fromArray.decryptTo(expected, 0);
        } catch (EnvelopeException e) {
            expectedRefusal = e.reason();
        }
        long memory = NativeMemory.allocate(Math.max(1, env.length));
        try {
            NativeMemory.copy(env, 0, memory, env.length);
            int room = Math.max(0, env.length - Envelope.HEADER_LENGTH);
            byte[] dst = new byte[room + 8];
            Arrays.fill(dst, CANARY);
            try {
                int length = fromMemory.openFromMemory(index, memory, env.length, dst, 4);
                assertNotNull(expected, "the one pass opened what the array path refused (" + expectedRefusal + ")");
                assertArrayEquals(expected, Arrays.copyOfRange(dst, 4, 4 + length), "plaintext");
                for (int i = 4 + length; i < dst.length; i++) {
                    assertEquals(CANARY, dst[i], "written past the plaintext at " + i);
                }
            } catch (EnvelopeException e) {
                assertEquals(expectedRefusal, e.reason(), "refusal");
                for (int i = 0; i < dst.length; i++) {
                    assertTrue(dst[i] == CANARY || (i >= 4 && dst[i] == 0), "plaintext left behind a refusal at " + i);
                }
            }
            for (int i = 0; i < 4; i++) {
                assertEquals(CANARY, dst[i], "written before the plaintext at " + i);
            }
        } finally {
            NativeMemory.free(memory);
        }
    }

}
