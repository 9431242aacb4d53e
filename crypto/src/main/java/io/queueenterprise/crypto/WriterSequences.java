package io.queueenterprise.crypto;

import java.util.Arrays;

/**
 * The highest writer sequence a reader has taken from each writer epoch: how a reader detects that an
 * authentic envelope NOT bound to its index was replayed or reordered (an index-bound one fails its tag).
 * Open addressing on the epoch; it grows only when a new writer session appears, so steady-state reads
 * allocate nothing. Single-threaded.
 */
final class WriterSequences {
    private static final long EMPTY = 0L; // epoch 0 is never issued: random epochs have the top bit set, term epochs a term >= 1

    private long[] epochs = new long[16];
    private int[] sequences = new int[16];
    private int size;

    /** Whether (epoch, sequence) comes after everything taken from that epoch so far. */
    boolean isNext(long epoch, int sequence) {
        int slot = find(epoch);
        return epochs[slot] == EMPTY || Integer.compareUnsigned(sequence, sequences[slot]) > 0;
    }

    /** Records that (epoch, sequence) was taken. */
    void take(long epoch, int sequence) {
        int slot = find(epoch);
        if (epochs[slot] == EMPTY) {
            if ((size + 1) * 2 > epochs.length) {
                grow();
                slot = find(epoch);
            }
            epochs[slot] = epoch;
            size++;
        }
        sequences[slot] = sequence;
    }

    /** Forgets everything (the reader moved: what it read before says nothing about what comes next). */
    void clear() {
        Arrays.fill(epochs, EMPTY);
        size = 0;
    }

    private int find(long epoch) {
        int mask = epochs.length - 1;
        int slot = Long.hashCode(epoch * 0x9E3779B97F4A7C15L) & mask;
        while (epochs[slot] != EMPTY && epochs[slot] != epoch) {
            slot = (slot + 1) & mask;
        }
        return slot;
    }

    private void grow() {
        long[] oldEpochs = epochs;
        int[] oldSequences = sequences;
        epochs = new long[oldEpochs.length * 2];
        sequences = new int[oldEpochs.length * 2];
        size = 0;
        for (int i = 0; i < oldEpochs.length; i++) {
            if (oldEpochs[i] != EMPTY) {
                take(oldEpochs[i], oldSequences[i]);
            }
        }
    }
}
