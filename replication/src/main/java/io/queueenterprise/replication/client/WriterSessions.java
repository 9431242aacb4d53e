package io.queueenterprise.replication.client;

import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.queue.ReplicaStore;
import org.agrona.collections.Long2LongHashMap;

/**
 * Per queue: for every remote writer session (the writer epoch of its unbound envelopes), the last writer sequence
 * in the queue and its index. Built by tailing the queue itself, on every replica, from its first excerpt, so a
 * node promoted after a failover answers a client's retry of an excerpt the old leader appended and replicated with
 * that excerpt's index instead of appending it again (Kafka's idempotent producer rebuilds its state from the log
 * in the same way). Index-bound envelopes (local appenders) and non-envelopes are skipped. Duty-cycle thread only.
 */
final class WriterSessions {
    private static final long NONE = Long.MIN_VALUE;
    /**
     * Remote appends of this queue whose (epoch, sequence) → index a node remembers beyond each epoch's last one: a
     * client resends its whole unacknowledged window after a failover (up to its window, 1,024 by default, 4,096 at
     * most), and the node answers each one it holds with its original index. 32 Ki entries (about 1.5 MiB per queue
     * with the map) cover the windows of every writer of the queue together up to that many appends.
     */
    static final int RECENT = 1 << 15;

    private final Long2LongHashMap lastSequence = new Long2LongHashMap(NONE);
    private final Long2LongHashMap lastIndex = new Long2LongHashMap(NONE);
    private ReplicaStore store;
    private ReplicaStore.RawTailer tailer;
    /** The ring of recent appends (oldest overwritten) and, by {@link #key}, the slot each one is in. */
    private long[] recentEpochs;
    private int[] recentSequences;
    private long[] recentIndexes;
    private int recentNext;
    private int recentCount;
    private final Long2LongHashMap recentSlot = new Long2LongHashMap(NONE);

    /** Reads up to {@code budget} more excerpts of {@code current}; true when it has read all there is. */
    boolean catchUp(ReplicaStore current, int budget) {
        if (current != store) {
            // a new store (opened, or rebuilt by a quarantine, which removes excerpts): start over from its first one
            close();
            lastSequence.clear();
            lastIndex.clear();
            recentSlot.clear();
            recentEpochs = null;
            recentNext = 0;
            recentCount = 0;
            store = current;
            tailer = current.rawTailer();
            tailer.toStart();
        }
        for (int n = 0; n < budget; n++) {
            int length = tailer.next();
            if (length < 0) {
                return true;
            }
            byte[] bytes = tailer.bytes();
            if (length >= Envelope.HEADER_LENGTH && Envelope.version(bytes, 0) == Envelope.VERSION && !Envelope.indexBound(bytes, 0)) {
                record(Envelope.epoch(bytes, 0), Envelope.sequence(bytes, 0), tailer.index());
            }
        }
        return false;
    }

    /** Notes that writer {@code epoch} stored {@code sequence} at {@code index} (only moves forward). */
    void record(long epoch, int sequence, long index) {
        long last = lastSequence.get(epoch);
        if (last == NONE || Integer.compareUnsigned(sequence, (int) last) > 0) {
            lastSequence.put(epoch, sequence & 0xFFFF_FFFFL);
            lastIndex.put(epoch, index);
            remember(epoch, sequence, index);
        }
    }

    private void remember(long epoch, int sequence, long index) {
        if (recentEpochs == null) {
            recentEpochs = new long[RECENT];
            recentSequences = new int[RECENT];
            recentIndexes = new long[RECENT];
        }
        int slot = recentNext;
        recentNext = (slot + 1) & (RECENT - 1);
        if (recentCount == RECENT) {
            long evicted = key(recentEpochs[slot], recentSequences[slot]);
            if (recentSlot.get(evicted) == slot) {
                recentSlot.remove(evicted);
            }
        } else {
            recentCount++;
        }
        recentEpochs[slot] = epoch;
        recentSequences[slot] = sequence;
        recentIndexes[slot] = index;
        recentSlot.put(key(epoch, sequence), slot);
    }

    /**
     * The index writer {@code epoch}'s {@code sequence} is at, when it is the epoch's last or one of the
     * {@link #RECENT} latest remote appends of the queue; else -1 (held, or not, but no longer known here).
     */
    long indexOf(long epoch, long sequence) {
        if (lastSequence(epoch) == sequence) {
            return lastIndex.get(epoch);
        }
        long slot = recentSlot.get(key(epoch, (int) sequence));
        if (slot == NONE || recentEpochs[(int) slot] != epoch || recentSequences[(int) slot] != (int) sequence) {
            return -1;
        }
        return recentIndexes[(int) slot];
    }

    /** A map key for (epoch, sequence): a collision only makes an older entry unknown, never a wrong answer. */
    private static long key(long epoch, int sequence) {
        return epoch ^ ((sequence & 0xFFFF_FFFFL) * 0x9E37_79B9_7F4A_7C15L);
    }

    /** The last sequence writer {@code epoch} stored (unsigned, as a long), or -1 when this queue holds none of it. */
    long lastSequence(long epoch) {
        long last = lastSequence.get(epoch);
        return last == NONE ? -1 : last;
    }

    long lastIndex(long epoch) {
        return lastIndex.get(epoch);
    }

    int size() {
        return lastSequence.size();
    }

    void close() {
        if (tailer != null) {
            tailer.close();
            tailer = null;
        }
        store = null;
    }
}
