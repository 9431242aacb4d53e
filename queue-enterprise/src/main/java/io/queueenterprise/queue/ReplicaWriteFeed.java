package io.queueenterprise.queue;

import io.queueenterprise.crypto.Envelope;

import java.lang.invoke.VarHandle;

/**
 * What a store's latest replicated writes ({@link ReplicaStore#writeAt}) were, for the node's writer sessions: each
 * one's index and, when it is an unbound envelope (a remote writer's), its writer epoch and sequence. A
 * single-producer, single-consumer ring of the latest {@value #CAPACITY}: the writing thread fills write {@code n}'s
 * slot before the store's write count moves past {@code n} (release); the duty thread reads the writes between the
 * count it accounted for and the count now, and is told when more arrived than the ring holds (it reads the queue
 * itself then). So a follower that serves clients does not read back every excerpt it has just written. Allocation-free.
 */
public final class ReplicaWriteFeed {
    /** Writes the ring holds; a power of two. */
    public static final int CAPACITY = 4096;
    private static final int MASK = CAPACITY - 1;
    /** A slot's sequence when the write is not an unbound envelope (a local appender's, or not an envelope). */
    public static final long NOT_A_SESSION = -1;
    /** A slot's index when the write failed and what it left is unknown: the reader reads the queue instead. */
    private static final long UNKNOWN = Long.MIN_VALUE;

    private final long[] indexes = new long[CAPACITY];
    private final long[] epochs = new long[CAPACITY];
    private final long[] sequences = new long[CAPACITY];

    /** What the duty thread is told of each write. */
    public interface Reader {
        /** Write at {@code index}; {@code sequence} (unsigned) and {@code epoch} are its writer session's, or {@link #NOT_A_SESSION}. */
        void written(long index, long epoch, long sequence);
    }

    /** The writing thread: write {@code n} (the count before it) was at {@code index}; {@code header} holds its first bytes. */
    void add(long n, long index, byte[] header, int length) {
        int slot = (int) n & MASK;
        indexes[slot] = index;
        if (length >= Envelope.HEADER_LENGTH && Envelope.version(header, 0) == Envelope.VERSION && !Envelope.indexBound(header, 0)) {
            epochs[slot] = Envelope.epoch(header, 0);
            sequences[slot] = Envelope.sequence(header, 0) & 0xFFFF_FFFFL;
        } else {
            sequences[slot] = NOT_A_SESSION;
        }
    }

    /** The writing thread: write {@code n} failed, and what it left in the queue (if anything) is unknown. */
    void unknown(long n) {
        indexes[(int) n & MASK] = UNKNOWN;
    }

    /**
     * The duty thread: hands {@code reader} writes {@code from} (inclusive) to {@code to} (exclusive) of
     * {@code store}, in order. False when the ring no longer holds all of them (more than {@value #CAPACITY} arrived,
     * the writer lapped one while they were read, or one failed): then read the queue instead; what was handed is correct.
     */
    public boolean read(ReplicaStore store, long from, long to, Reader reader) {
        if (to - from > CAPACITY) {
            return false;
        }
        for (long n = from; n < to; n++) {
            int slot = (int) n & MASK;
            long index = indexes[slot];
            long epoch = epochs[slot];
            long sequence = sequences[slot];
            VarHandle.loadLoadFence(); // the slot's reads before the count's: a lap is seen below
            if (store.replicaWrites() - n >= CAPACITY) {
                return false; // the writer is at or past n + CAPACITY: it may have overwritten this slot meanwhile
            }
            if (index == UNKNOWN) {
                return false;
            }
            reader.written(index, epoch, sequence);
        }
        return true;
    }
}
