package io.queueenterprise.crypto;

import org.junit.jupiter.api.Assumptions;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The calling thread's allocation counter (HotSpot's per-thread count: deterministic, not timing), for the
 * steady-state allocation tests of crypto, protocol and remote-client (shared through this module's test-jar).
 */
public final class AllocationCounter {
    /** Keeps what the control allocates and what the measured work returns alive. */
    public static volatile Object sink;

    private final com.sun.management.ThreadMXBean mx;

    private AllocationCounter(com.sun.management.ThreadMXBean mx) {
        this.mx = mx;
    }

    /** The counter, enabled; the test is skipped where the JVM has none. */
    public static AllocationCounter enabled() {
        java.lang.management.ThreadMXBean plain = ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(plain instanceof com.sun.management.ThreadMXBean, "needs HotSpot's ThreadMXBean");
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) plain;
        Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported());
        mx.setThreadAllocatedMemoryEnabled(true);
        return new AllocationCounter(mx);
    }

    /** Control: the counter does see allocation in this JVM (so an assertion on it can fail). */
    public void assertSeesAllocation() {
        long c0 = mx.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 1000; i++) {
            sink = new byte[100 + (i & 1)];
        }
        assertTrue(mx.getCurrentThreadAllocatedBytes() - c0 >= 100_000, "allocation counter not working");
    }

    /**
     * Bytes this thread allocated in each of three runs of {@code round} (its result is kept alive). The least
     * counts: an allocation on the path shows in every round, a one-off JIT event (a deoptimisation rematerialising
     * objects: 2.5 KB once in a CI run) in one.
     */
    public long[] threeRounds(LongSupplier round) {
        long[] rounds = new long[3];
        long sum = 0;
        for (int r = 0; r < rounds.length; r++) {
            long before = mx.getCurrentThreadAllocatedBytes();
            sum += round.getAsLong();
            rounds[r] = mx.getCurrentThreadAllocatedBytes() - before;
        }
        sink = sum;
        return rounds;
    }

    /** The least of {@link #threeRounds}' counts. */
    public static long least(long[] rounds) {
        return Arrays.stream(rounds).min().orElseThrow();
    }
}
