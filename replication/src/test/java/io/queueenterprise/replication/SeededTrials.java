package io.queueenterprise.replication;

import java.nio.file.Path;

/**
 * Seeded, bounded trials of a multi-process scenario: the base seed comes from {@code -D<property>.seed} (default: the
 * clock), the count from {@code -D<property>.trials}. A failure names the trial, the cause (in the first line: CI
 * shows only that), where the node logs are and how to replay exactly that trial.
 */
final class SeededTrials {
    /** One trial: its seed, a fresh folder for its cluster, and where its node logs go. */
    interface Trial {
        void run(long seed, Path root, Path logs) throws Exception;
    }

    private SeededTrials() {
    }

    static void run(String property, int defaultTrials, Path tmp, String logsFolder, Trial trial) {
        long baseSeed = Long.getLong(property + ".seed", System.nanoTime());
        int trials = Integer.getInteger(property + ".trials", defaultTrials);
        for (int t = 0; t < trials; t++) {
            long seed = baseSeed + t;
            try {
                trial.run(seed, tmp.resolve("trial-" + t), Path.of("target", logsFolder, Long.toString(seed)));
            } catch (Throwable e) {
                throw new AssertionError("trial " + t + " failed: " + e + " (node logs in target/" + logsFolder + "/" + seed
                        + "); replay with -D" + property + ".seed=" + seed + " -D" + property + ".trials=1 (base seed "
                        + baseSeed + ")", e);
            }
        }
    }
}
