package io.queueenterprise.crypto;

import java.security.SecureRandom;

/**
 * Where a writer session's 64-bit epoch comes from. The envelope nonce is (epoch, sequence) and one writer
 * never repeats a sequence within an epoch, so nonces stay unique as long as no two writer sessions share an
 * epoch. {@link #random()}: 63 random bits per session, top bit set; for n sessions under one derived key the
 * chance that any two share an epoch is at most n^2/2^64. Crash-and-restart, a copied directory, a restored volume
 * snapshot, a second process and a promoted replica all start new sessions and draw new epochs: nothing on disk
 * takes part (docs/crypto.md, "Nonces").
 *
 * <p>Until issue 19 a promoted leader used term epochs (term &lt;&lt; 16 | slot, top bit clear), unique only while no
 * term was used twice, which a file decided. They are no longer issued; queues that hold them read as before, and a
 * random epoch (top bit set) never equals one.
 * Thread-safe.
 */
public abstract class WriterEpochs {
    private static final long RANDOM_BIT = Long.MIN_VALUE;
    /** The highest leadership term a queue accepts (terms fence promotions; they no longer number epochs). */
    public static final long MAX_TERM = (1L << 47) - 1;

    WriterEpochs() {
    }

    /** A new epoch for a writer session. */
    public abstract long next();

    public static WriterEpochs random() {
        return RandomEpochs.INSTANCE;
    }

    /**
     * Epochs from {@code next}, which must give top-bit-set epochs no other writer session draws (a remote client's
     * epochs commit to a key pair it draws per epoch, see the protocol's WriterClaim).
     */
    public static WriterEpochs of(java.util.function.LongSupplier next) {
        return new WriterEpochs() {
            @Override
            public long next() {
                long epoch = next.getAsLong();
                if (!isRandom(epoch)) {
                    throw new IllegalStateException("a writer epoch without its top bit: " + Long.toHexString(epoch));
                }
                return epoch;
            }
        };
    }

    /** Whether an epoch was drawn at random (otherwise it is a term epoch written before issue 19). */
    public static boolean isRandom(long epoch) {
        return (epoch & RANDOM_BIT) != 0;
    }

    private static final class RandomEpochs extends WriterEpochs {
        static final RandomEpochs INSTANCE = new RandomEpochs();
        private final SecureRandom random = new SecureRandom();

        @Override
        public long next() {
            return random.nextLong() | RANDOM_BIT;
        }
    }
}
