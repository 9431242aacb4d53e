package io.queueenterprise.crypto;

import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where a writer session's 64-bit epoch comes from. The envelope nonce is (epoch, sequence) and one writer
 * never repeats a sequence within an epoch, so nonces stay unique as long as no two writer sessions share an
 * epoch. Two sources, in disjoint halves of the 64-bit space (top bit):
 * <ul>
 *   <li>{@link #random()}: 63 random bits per session, top bit set. Two sessions collide with probability
 *       2^-63 per pair (birthday bound: 2^-63 * n^2 / 2 for n sessions of one key): crash-and-restart, a
 *       copied directory, a restored volume snapshot all start new sessions and draw new epochs.</li>
 *   <li>{@link #ofTerm(long)}: for a leader promoted under a leadership term that is never reused
 *       (replication): epoch = term &lt;&lt; 16 | session slot, top bit clear. Deterministically unique for
 *       up to 65,536 writer sessions per term.</li>
 * </ul>
 * Thread-safe.
 */
public abstract class WriterEpochs {
    private static final long RANDOM_BIT = Long.MIN_VALUE;
    /** Terms must fit 47 bits so that term epochs keep the top bit clear. */
    public static final long MAX_TERM = (1L << 47) - 1;
    static final int SLOTS_PER_TERM = 1 << 16;

    WriterEpochs() {
    }

    /** A new, never-before-issued epoch for a writer session. */
    public abstract long next();

    public static WriterEpochs random() {
        return RandomEpochs.INSTANCE;
    }

    /** Epochs of writer sessions under leadership term {@code term} (1..{@link #MAX_TERM}). */
    public static WriterEpochs ofTerm(long term) {
        if (term < 1 || term > MAX_TERM) {
            throw new IllegalArgumentException("term " + term + " outside 1.." + MAX_TERM);
        }
        return new TermEpochs(term);
    }

    /** Whether an epoch was drawn at random (otherwise it carries a term). */
    public static boolean isRandom(long epoch) {
        return (epoch & RANDOM_BIT) != 0;
    }

    /** The term an epoch was issued under, or 0 for a random epoch. */
    public static long termOf(long epoch) {
        return isRandom(epoch) ? 0 : epoch >>> 16;
    }

    private static final class RandomEpochs extends WriterEpochs {
        static final RandomEpochs INSTANCE = new RandomEpochs();
        private final SecureRandom random = new SecureRandom();

        @Override
        public long next() {
            return random.nextLong() | RANDOM_BIT;
        }
    }

    private static final class TermEpochs extends WriterEpochs {
        private final long term;
        private final AtomicLong slots = new AtomicLong();

        TermEpochs(long term) {
            this.term = term;
        }

        @Override
        public long next() {
            long slot = slots.getAndIncrement();
            if (slot >= SLOTS_PER_TERM) {
                throw new IllegalStateException("term " + term + " has issued all " + SLOTS_PER_TERM
                        + " writer epochs; promote under a new term");
            }
            return term << 16 | slot;
        }

        @Override
        public String toString() {
            return "WriterEpochs[term " + term + "]";
        }
    }
}
