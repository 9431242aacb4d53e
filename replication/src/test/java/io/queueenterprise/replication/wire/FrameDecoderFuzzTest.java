package io.queueenterprise.replication.wire;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The decoders never throw anything but {@link MalformedFrameException}, never read outside the frame (Agrona's
 * bounds checks would throw IndexOutOfBoundsException, which fails these tests), and never loop unbounded.
 */
@org.junit.jupiter.api.Tag("unit")
class FrameDecoderFuzzTest {

    /**
     * Jazzer: in the suite, regression mode over the committed seeds (src/test/resources/.../FrameDecoderFuzzTestInputs);
     * with JAZZER_FUZZ=1, coverage-guided fuzzing for maxDuration.
     */
    @FuzzTest(maxDuration = "10s")
    void decodersThrowOnlyMalformedFrameException(byte[] input) {
        new DecodeEverything().decode(input, 0, input.length);
    }

    @Test
    void everySampleDecodesAsItsOwnType() {
        DecodeEverything decoder = new DecodeEverything();
        for (byte[] sample : FrameSamples.all()) {
            assertEquals(2, decoder.decode(sample, 0, sample.length),
                    "a sample of " + FrameType.of(sample[1]) + " is accepted by the header and exactly one body decoder");
        }
    }

    /**
     * A bounded, seeded mutation run that needs no fuzzing engine: 300,000 mutants of the valid samples (bit flips,
     * overwritten bytes and lengths, truncation, extension), every one decoded by every decoder.
     */
    @Test
    void seededMutantsOfValidFramesThrowOnlyMalformedFrameException() {
        long seed = Long.getLong("qe.fuzz.seed", System.nanoTime());
        SplittableRandom random = new SplittableRandom(seed);
        List<byte[]> samples = FrameSamples.all();
        DecodeEverything decoder = new DecodeEverything();
        int accepted = 0;
        for (int i = 0; i < 300_000; i++) {
            byte[] sample = samples.get(random.nextInt(samples.size()));
            byte[] mutant = java.util.Arrays.copyOf(sample, Math.max(0, sample.length + random.nextInt(-8, 9)));
            int mutations = 1 + random.nextInt(4);
            for (int m = 0; m < mutations && mutant.length > 0; m++) {
                int at = random.nextInt(mutant.length);
                switch (random.nextInt(4)) {
                    case 0 -> mutant[at] ^= (byte) (1 << random.nextInt(8));
                    case 1 -> mutant[at] = (byte) random.nextInt(256);
                    case 2 -> mutant[at] = (byte) (random.nextBoolean() ? 0xFF : 0x7F);
                    default -> {
                        if (mutant.length >= Frame.HEADER_LENGTH) { // keep the header's length in step, to reach the bodies
                            org.agrona.concurrent.UnsafeBuffer b = new org.agrona.concurrent.UnsafeBuffer(mutant);
                            b.putInt(Frame.LENGTH_OFFSET, mutant.length, Frame.ORDER);
                        }
                    }
                }
            }
            if (mutant.length >= Frame.HEADER_LENGTH && random.nextInt(3) > 0) {
                new org.agrona.concurrent.UnsafeBuffer(mutant).putInt(Frame.LENGTH_OFFSET, mutant.length, Frame.ORDER);
            }
            try {
                if (decoder.decode(mutant, 0, mutant.length) > 1) {
                    accepted++;
                }
            } catch (RuntimeException | AssertionError e) {
                throw new AssertionError("seed " + seed + " (rerun with -Dqe.fuzz.seed=" + seed + "), mutant " + i + ": "
                        + java.util.HexFormat.of().formatHex(mutant), e);
            }
        }
        assertTrue(accepted > 1000, "the mutants also reach the body decoders' accept paths (" + accepted + "), seed " + seed);
    }

    @Test
    void aFrameOutsideItsBufferIsMalformedNotAnIndexError() {
        byte[] sample = FrameSamples.all().get(0);
        org.agrona.concurrent.UnsafeBuffer buffer = new org.agrona.concurrent.UnsafeBuffer(sample);
        MalformedFrameException e = org.junit.jupiter.api.Assertions.assertThrows(MalformedFrameException.class,
                () -> new Frame().wrap(buffer, 8, sample.length));
        assertEquals("length", e.field());
    }
}
