package io.queueenterprise.replication.client;

import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.protocol.client.ClientProtocol;
import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.queue.ReplicaWriteFeed;
import org.agrona.collections.Long2LongHashMap;

/**
 * Per queue: for every remote writer session (the writer epoch of its unbound envelopes), the last writer sequence
 * in the queue and its index. Built by tailing the queue itself, on every replica, from its first excerpt, so a
 * node promoted after a failover answers a client's retry of an excerpt the old leader appended and replicated with
 * that excerpt's index instead of appending it again (Kafka's idempotent producer rebuilds its state from the log
 * in the same way). Index-bound envelopes (local appenders) and non-envelopes are skipped. Duty-cycle thread only.
 *
 * <p>Beyond each epoch's last append, the {@value #RINGS} most recently active epochs each keep the index of their
 * latest {@link ClientProtocol#MAX_WINDOW_APPENDS} appends (a client's largest window: what it resends after a
 * failover) in a ring indexed by the writer sequence. A node accepts only an epoch's next sequence, so an epoch's
 * appends are consecutive sequences: recording one is a store into the ring (sequential, no hashing; a hash map of
 * the queue's latest 32 Ki appends took 13 % of a leader's and 42 % of a follower's samples under a remote client's
 * full window), and finding one is arithmetic on the sequence.
 */
final class WriterSessions {
    private static final long NONE = Long.MIN_VALUE;
    /** Appends remembered per epoch: a client's largest window. A power of two (the ring's slot is the sequence's low bits). */
    static final int PER_EPOCH = ClientProtocol.MAX_WINDOW_APPENDS;
    /**
     * Epochs whose latest appends are remembered at once (the least recently appended gives up its ring to a new
     * one): {@value} × 4,096 × 8 bytes, 2 MiB per queue at most, allocated as writers appear.
     */
    static final int RINGS = 64;

    private final Long2LongHashMap lastSequence = new Long2LongHashMap(NONE);
    private final Long2LongHashMap lastIndex = new Long2LongHashMap(NONE);
    private ReplicaStore store;
    private ReplicaStore.RawTailer tailer;
    /**
     * The store's {@link ReplicaStore#replicaWrites} count up to which every excerpt of the queue is accounted for, or
     * {@link #NONE} while the tailer reads on. Beyond the excerpts the tailer read, the queue grows only by this node's
     * own appends, recorded as they are made ({@link #appended}), by replicated writes, which the store's
     * {@link ReplicaWriteFeed} tells of (their count moves), and by local appenders' index-bound envelopes, which are
     * never a writer session's. So neither a leader's own appends nor a follower's replicated writes are read back
     * (that read was 11 % of a leader's and 4 % of all samples on a follower under a remote client's full window).
     */
    private long replicaWritesAtEnd = NONE;
    /**
     * Excerpts recorded without the tailer since it last read to the end (this node's own appends, and replicated
     * writes taken from the store's {@link ReplicaWriteFeed}), and the latest one's index: everything up to it is known.
     */
    private int recordedSinceEnd;
    private long knownLastIndex = -1;
    /** Records each replicated write the feed tells of (one object: nothing allocated per write). */
    private final ReplicaWriteFeed.Reader fed = (index, epoch, sequence) -> {
        if (sequence != ReplicaWriteFeed.NOT_A_SESSION) {
            record(epoch, (int) sequence, index);
        }
        recordedSinceEnd++;
        knownLastIndex = Math.max(knownLastIndex, index);
    };
    /**
     * Records made without the tailer after which it is moved past them (an index lookup), so that it never lags far
     * behind the queue: it would hold old cycle files mapped, and a lost feed would make it read them all again.
     */
    static final int REPOSITION_AFTER = 4096;

    /** Epoch → its ring; and per ring: the epoch, the indexes by sequence, the run of sequences held, the last use. */
    private final Long2LongHashMap ringOf = new Long2LongHashMap(NONE);
    private final long[][] ringIndexes = new long[RINGS][];
    private final long[] ringEpoch = new long[RINGS];
    /** The ring holds the consecutive sequences [first, last] (unsigned), the latest {@link #PER_EPOCH} of them. */
    private final long[] ringFirst = new long[RINGS];
    private final long[] ringLast = new long[RINGS];
    private final long[] ringUsed = new long[RINGS];
    private int ringsAssigned;
    private long useClock;
    /** The ring of the epoch recorded last: writers append in runs, so most records skip the lookup. */
    private long cachedEpoch = NONE;
    private int cachedRing = -1;

    /** Reads up to {@code budget} more excerpts of {@code current}; true when it has read all there is. */
    boolean catchUp(ReplicaStore current, int budget) {
        if (current != store) {
            // a new store (opened, or rebuilt by a quarantine, which removes excerpts): start over from its first one
            close();
            lastSequence.clear();
            lastIndex.clear();
            ringOf.clear();
            ringsAssigned = 0; // each ring's epoch and run are set again as it is assigned
            cachedEpoch = NONE;
            cachedRing = -1;
            store = current;
            tailer = current.rawTailer();
            tailer.toStart();
            replicaWritesAtEnd = NONE;
            recordedSinceEnd = 0;
            knownLastIndex = -1;
        }
        long replicaWrites = current.replicaWrites(); // noted before reading: a write after it is seen next time
        if (replicaWritesAtEnd != NONE && replicaWrites != replicaWritesAtEnd) {
            // replicated excerpts arrived (this node follows): what they were, from the store's feed, without reading
            // them back; when it no longer holds them all, read on from where the tailer stopped (below)
            replicaWritesAtEnd = current.replicaWriteFeed().read(current, replicaWritesAtEnd, replicaWrites, fed)
                    ? replicaWrites : NONE;
        }
        if (replicaWritesAtEnd != NONE) {
            if (recordedSinceEnd >= REPOSITION_AFTER) {
                // everything up to knownLastIndex is recorded (own appends, fed writes) or index-bound: skip it by index
                if (tailer.moveAfter(knownLastIndex)) {
                    recordedSinceEnd = 0;
                } else {
                    replicaWritesAtEnd = NONE; // not held (cannot happen without a new store): read on instead
                    tailer.toStart();
                }
            }
            return true;
        }
        for (int n = 0; n < budget; n++) {
            int length = tailer.next();
            if (length < 0) {
                replicaWritesAtEnd = replicaWrites;
                recordedSinceEnd = 0;
                return true;
            }
            byte[] bytes = tailer.bytes();
            if (length >= Envelope.HEADER_LENGTH && Envelope.version(bytes, 0) == Envelope.VERSION && !Envelope.indexBound(bytes, 0)) {
                record(Envelope.epoch(bytes, 0), Envelope.sequence(bytes, 0), tailer.index());
            }
        }
        return false;
    }

    /**
     * This node appended writer {@code epoch}'s {@code sequence} at {@code index} (its gateway, as leader, right after
     * {@link #catchUp} returned true): recorded now, so that the tailer need not read it back.
     */
    void appended(long epoch, int sequence, long index) {
        record(epoch, sequence, index);
        recordedSinceEnd++;
        knownLastIndex = index;
    }

    /** Notes that writer {@code epoch} stored {@code sequence} at {@code index} (only moves forward). */
    void record(long epoch, int sequence, long index) {
        long last = lastSequence.get(epoch);
        if (last == NONE || Integer.compareUnsigned(sequence, (int) last) > 0) {
            long unsigned = sequence & 0xFFFF_FFFFL;
            lastSequence.put(epoch, unsigned);
            lastIndex.put(epoch, index);
            remember(epoch, unsigned, index);
        }
    }

    private void remember(long epoch, long sequence, long index) {
        int r = ringFor(epoch);
        if (ringLast[r] < 0 || sequence != ringLast[r] + 1) {
            ringFirst[r] = sequence; // a new run: nothing before it is known (never the case for a node's own appends)
        } else if (sequence - ringFirst[r] >= PER_EPOCH) {
            ringFirst[r] = sequence - PER_EPOCH + 1; // the slot this one takes held the run's oldest
        }
        ringLast[r] = sequence;
        ringIndexes[r][(int) sequence & (PER_EPOCH - 1)] = index;
        ringUsed[r] = ++useClock;
    }

    /** The ring of {@code epoch}, assigned now (a new one, or the least recently used one's) when it has none. */
    private int ringFor(long epoch) {
        if (epoch == cachedEpoch) {
            return cachedRing;
        }
        long found = ringOf.get(epoch);
        int r;
        if (found != NONE) {
            r = (int) found;
        } else {
            if (ringsAssigned < RINGS) {
                r = ringsAssigned++;
                if (ringIndexes[r] == null) {
                    ringIndexes[r] = new long[PER_EPOCH];
                }
            } else {
                r = 0;
                for (int i = 1; i < RINGS; i++) {
                    if (ringUsed[i] < ringUsed[r]) {
                        r = i;
                    }
                }
                ringOf.remove(ringEpoch[r]);
            }
            ringEpoch[r] = epoch;
            ringLast[r] = -1;
            ringOf.put(epoch, r);
        }
        cachedEpoch = epoch;
        cachedRing = r;
        return r;
    }

    /**
     * The index writer {@code epoch}'s {@code sequence} is at, when it is the epoch's last or one of its latest
     * {@link #PER_EPOCH} and the epoch is one of the {@link #RINGS} most recently active; else -1 (held, or not, but
     * no longer known here).
     */
    long indexOf(long epoch, long sequence) {
        if (lastSequence(epoch) == sequence) {
            return lastIndex.get(epoch);
        }
        long found = ringOf.get(epoch);
        if (found == NONE) {
            return -1;
        }
        int r = (int) found;
        if (sequence < ringFirst[r] || sequence > ringLast[r]) {
            return -1;
        }
        return ringIndexes[r][(int) sequence & (PER_EPOCH - 1)];
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
