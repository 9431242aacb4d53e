package io.queueenterprise.crypto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Steady-state seal + open allocate nothing. Uses the per-thread allocation counter (deterministic, not timing).
 */
@org.junit.jupiter.api.Tag("unit")
@org.junit.jupiter.api.Tag("slow")
class ZeroAllocationTest {
    private static final int WARMUP = 30_000;
    private static final int MEASURED = 100_000;
    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> cases() {
        return SealOpenTest.modesAndEngines();
    }

    @ParameterizedTest
    @MethodSource("cases")
    void sealAndOpenDoNotAllocate(CipherMode mode, CryptoEngine engine) {
        AllocationCounter counter = AllocationCounter.enabled();

        // A ring behind a volatile read, as the library will use it; both key ids in use, rotating once.
        AtomicReference<KeyRing> ring = new AtomicReference<>(SealOpenTest.RING);
        ExcerptSealer sealer = new ExcerptSealer(SealOpenTest.QUEUE, ring::get, mode, engine);
        ExcerptOpener opener = new ExcerptOpener(SealOpenTest.QUEUE, ring::get, mode, engine);
        int overhead = Envelope.HEADER_LENGTH + Envelope.TAG_LENGTH;
        byte[][] bufs = {new byte[40 + overhead], new byte[256 + overhead], new byte[5000 + overhead]};
        int[] sizes = {40, 256, 5000};

        run(sealer, opener, bufs, sizes, WARMUP);
        ring.set(SealOpenTest.RING.withActiveKeyId(3)); // key 3 for new writes; both ids cached in the opener
        run(sealer, opener, bufs, sizes, WARMUP);

        counter.assertSeesAllocation();
        long[] sum = {0};
        long[] rounds = counter.threeRounds(() -> sum[0] += run(sealer, opener, bufs, sizes, MEASURED));
        long allocated = AllocationCounter.least(rounds);
        assertTrue(sum[0] != 42);
        // The smallest object is 16 bytes, so an allocation in even one operation in 200 would show as
        // 16 KB in every round. The 1 KiB allowance is for stray one-off events in the quietest round.
        assertTrue(allocated < 1024, mode + "/" + engine + ": " + java.util.Arrays.toString(rounds) + " bytes per round of "
                + (2L * MEASURED) + " seal and open operations");
        assertEquals(3, sealer.activeKeyId());
    }

    private static long run(ExcerptSealer sealer, ExcerptOpener opener, byte[][] bufs, int[] sizes, int n) {
        long sum = 0;
        for (int i = 0; i < n; i++) {
            int k = i % 3;
            byte[] buf = bufs[k];
            buf[Envelope.HEADER_LENGTH] = (byte) i;
            int envLen = sealer.sealInPlace(i, buf, 0, sizes[k]);
            sum += opener.openInPlace(i, buf, 0, envLen);
            if (buf[Envelope.HEADER_LENGTH] != (byte) i) {
                throw new AssertionError("round trip failed at " + i);
            }
        }
        return sum;
    }
}
