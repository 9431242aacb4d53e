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

    private final Long2LongHashMap lastSequence = new Long2LongHashMap(NONE);
    private final Long2LongHashMap lastIndex = new Long2LongHashMap(NONE);
    private ReplicaStore store;
    private ReplicaStore.RawTailer tailer;

    /** Reads up to {@code budget} more excerpts of {@code current}; true when it has read all there is. */
    boolean catchUp(ReplicaStore current, int budget) {
        if (current != store) {
            // a new store (opened, or rebuilt by a quarantine, which removes excerpts): start over from its first one
            close();
            lastSequence.clear();
            lastIndex.clear();
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
        }
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
