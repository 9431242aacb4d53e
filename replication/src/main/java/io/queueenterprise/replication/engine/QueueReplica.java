package io.queueenterprise.replication.engine;

import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.replication.QueueStatus;
import org.HdrHistogram.Recorder;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One hosted queue on this node: its store, term history and replication state. Duty-cycle thread only. */
final class QueueReplica {
    private static final Logger LOG = LoggerFactory.getLogger(QueueReplica.class);
    private static final boolean ASSERTIONS = QueueReplica.class.desiredAssertionStatus();
    /** A writer blocked this long counts as a stall in the status. */
    static final long WRITER_STALL_NANOS = 1_000_000_000L;
    /** Excerpts whose first sighting on the leader is remembered for ack latency and lag in ns. */
    private static final int SEEN_RING = 1 << 16;

    final EngineSettings.QueueSettings spec;
    final int position;
    /**
     * Where the queue stands in the node's life: opening, settling after a role change, or taking part. Only
     * {@link #moveTo} changes it (transitions logged at DEBUG).
     */
    enum Phase {
        /** Not handed over by the {@link QueueOpener} yet: the fields below are unset and the queue takes no part. */
        OPENING,
        /** A role change: its writer could not be asked for the last index yet (its ring was full); asked each cycle. */
        SETTLE_NOT_ASKED,
        /**
         * A role change waits for this queue's writer to find its last index (after the writes handed over before
         * it): meanwhile the queue takes no part, as if not open yet.
         */
        SETTLING,
        /** Takes part in the protocol in the node's role. */
        ACTIVE
    }

    private Phase phase = Phase.OPENING;
    /** Counts role changes: a last index found for an older one is ignored. */
    long roleGeneration;
    /** Writes this queue's store off the duty thread; created when the queue opens. */
    QueueWriter writer;
    ReplicaStore store;
    TermHistory history;
    /** Leader: the last index its own tail has seen; follower: the last index written here. -1: empty. */
    long lastIndex = -1;
    /** How the queue takes part in its role; only {@link #transition} changes it (with its detail). */
    private ReplicaState state = ReplicaState.STOPPED;
    /** Why the queue is in its state (which excerpt is damaged, how long its writer has been blocked); "" if nothing. */
    private String detail = "";
    long bytesReplicated;
    long quorumIndex = -1;
    /** Follower: the leader's last index as last reported (heartbeat), to tell CATCHING_UP from LIVE. */
    long leaderLastIndex = -1;
    /**
     * Follower: the last index handed to the writer, which it will write unless a write fails (-1: empty). Gaps are
     * judged against it; acknowledgements only ever carry {@link #lastIndex}, what the writer has written.
     */
    long acceptedIndex = -1;
    /** Follower: the leader's latest quorum index, bounded by what is written here when published. */
    long leaderQuorumIndex = -1;
    /** Follower: since when (nanoTime) the writer's ring has been too full for the next frame; 0 when it is not. */
    long ringFullSinceNanos;
    /** Follower: whole seconds its writer has been blocked, as last written into the detail. */
    long blockedSecondsReported;
    /** Follower: the writer's failed writes reported so far (state, refusal). */
    long failuresSeen;
    /** Follower: the CRC32C of every excerpt it stored, checked when the node opens the queue. */
    ExcerptChecksums checksums;
    /**
     * Why this copy must not be served or acknowledged (a stored excerpt differs from its recorded checksum); null
     * when sound. Set when the node opens the queue; the queue stays CORRUPTED in every role until it is rebuilt.
     */
    String damage;
    /** Leader: notices, without reading it, that the descriptor file may have changed. */
    DescriptorWatch descriptorWatch;
    /** Leader: its own tail, which finds what the library appended (for quorum with one replica, lag, ack latency). */
    ReplicaStore.RawTailer selfTail;
    /**
     * Follower: the excerpt being assembled from EXCERPT_PART pieces (index -1: none), its length and the bytes
     * received so far. The array grows to the largest excerpt seen, bounded by the store's maximum excerpt length.
     */
    long partIndex = -1;
    int partTotal;
    int partReceived;
    byte[] partBytes = new byte[0];
    /** The quarantine folders of this queue on disk, as last counted (at open, and after each quarantine). */
    QueueStatus.Quarantines quarantines = QueueStatus.Quarantines.NONE;
    /** Follower: resynchronisations since start (the status reports them; replaced per resync, which is rare). */
    QueueStatus.Resyncs resyncs = QueueStatus.Resyncs.NONE;
    /** Times since start the writer was blocked for {@link #WRITER_STALL_NANOS} or more, and when the latest began. */
    long writerStalls;
    String lastWriterStallAt;
    /** The writer's operation in hand was already counted as a stall. */
    private boolean inWriterStall;
    /** The longest append-to-quorum latency recorded as itself; longer ones are recorded as this (60 s). */
    static final long MAX_RECORDED_ACK_NANOS = 60_000_000_000L;
    /**
     * Append-to-quorum latencies (ns) of excerpts the quorum index passed while this node led. Sized for
     * {@link #MAX_RECORDED_ACK_NANOS} from the start (about 0.4 MiB a queue): an auto-resizing one grew by a few hundred
     * KiB on the duty thread whenever a stall set a new maximum, an allocation on the hot path.
     */
    final Recorder ackLatency = new Recorder(MAX_RECORDED_ACK_NANOS, 3);

    private final long[] seenIndex = new long[SEEN_RING];
    private final long[] seenNanos = new long[SEEN_RING];
    private long seenHead;
    private long seenTail;

    Phase phase() {
        return phase;
    }

    void moveTo(Phase next, String why) {
        if (next != phase && LOG.isDebugEnabled()) {
            LOG.debug(spec.name() + ": " + phase + " -> " + next + " (" + why + ")");
        }
        phase = next;
    }

    ReplicaState state() {
        return state;
    }

    /** What the status, the metrics and an ACK report: derived from the state. */
    QueueStatus.State reported() {
        return state.reported();
    }

    /** Why the queue is in its state; "" when there is nothing to say. */
    String detail() {
        return detail;
    }

    /**
     * The one place the state changes: {@code next} must be allowed from the current state by
     * {@link ReplicaState#canMoveTo} (an illegal transition throws when assertions are enabled, as in tests, and is
     * logged at ERROR and applied otherwise, so a node keeps running as it did before the table existed).
     * {@code detail}: why, as the status reports it; null keeps the current one. Logged at DEBUG when the state changes.
     */
    void transition(ReplicaState next, String detail) {
        ReplicaState from = state;
        if (!from.canMoveTo(next)) {
            ReplicaState.IllegalTransitionException illegal = new ReplicaState.IllegalTransitionException(spec.name(), from, next);
            if (ASSERTIONS) {
                throw illegal;
            }
            LOG.error(illegal.getMessage(), illegal);
        }
        state = next;
        if (detail != null) {
            this.detail = detail;
        }
        if (next != from && LOG.isDebugEnabled()) {
            LOG.debug(spec.name() + ": " + from + " -> " + next
                    + (this.detail.isEmpty() ? "" : " (" + this.detail + ")"));
        }
    }

    /** A new detail for the current state (how long the writer has been blocked, why it cannot open yet). */
    void describe(String detail) {
        transition(state, detail);
    }

    /**
     * Follower: the session to the leader ended (timeout, new session, transport restart): a synchronised queue
     * waits for the DESCRIPTOR that answers its next HELLO. Other states are kept (a writer still behind owes its
     * HELLO once drained; a refused or failed copy stays as it is).
     */
    void sessionLost(String why) {
        if (state.synced()) {
            transition(ReplicaState.AWAITING_DESCRIPTOR, null);
            if (LOG.isDebugEnabled()) {
                LOG.debug(spec.name() + ": " + why);
            }
        }
    }

    /** Handed over by the opener: its store and writer are set. */
    boolean open() {
        return phase != Phase.OPENING;
    }

    /** Waits for its last index after a role change. */
    boolean settling() {
        return phase == Phase.SETTLE_NOT_ASKED || phase == Phase.SETTLING;
    }

    /** Takes part in the protocol: open, and not waiting for its last index after a role change. */
    boolean active() {
        return phase == Phase.ACTIVE;
    }

    QueueReplica(EngineSettings.QueueSettings spec, int position) {
        this.spec = spec;
        this.position = position;
    }

    /** Remembers when the leader first saw {@code index} (its own tail found it; close to the append). */
    void seen(long index, long nanos) {
        if (seenHead - seenTail == SEEN_RING) {
            seenTail++; // forget the oldest: its latency is not recorded rather than recorded wrong
        }
        int slot = (int) (seenHead++ & (SEEN_RING - 1));
        seenIndex[slot] = index;
        seenNanos[slot] = nanos;
    }

    /** The quorum index moved to {@code quorum}: records the latency of every remembered excerpt it now covers. */
    void quorumReached(long quorum, long nanos, boolean record) {
        while (seenTail < seenHead) {
            int slot = (int) (seenTail & (SEEN_RING - 1));
            if (seenIndex[slot] > quorum) {
                break;
            }
            if (record) {
                ackLatency.recordValue(Math.min(MAX_RECORDED_ACK_NANOS, Math.max(0, nanos - seenNanos[slot])));
            }
            seenTail++;
        }
    }

    /** Age of the oldest remembered excerpt after {@code durable}; 0 when none. */
    long lagNanos(long durable, long nanos) {
        for (long i = seenTail; i < seenHead; i++) {
            int slot = (int) (i & (SEEN_RING - 1));
            if (seenIndex[slot] > durable) {
                return nanos - seenNanos[slot];
            }
        }
        return 0;
    }

    /** Starts assembling excerpt {@code index} of {@code total} bytes (the caller checked the bound). */
    void startPart(long index, int total) {
        if (partBytes.length < total) {
            partBytes = new byte[total];
        }
        partIndex = index;
        partTotal = total;
        partReceived = 0;
    }

    /** Forgets a partly assembled excerpt: its leader starts it over from its first piece. */
    void dropPart() {
        partIndex = -1;
        partTotal = 0;
        partReceived = 0;
    }

    /**
     * This follower's copy falls back to resynchronising through HELLO for {@code cause}: counted with its
     * circumstances, for the status (duty thread; a resync is rare, so the record is replaced).
     */
    void resynchronising(QueueStatus.ResyncCause cause, String detail) {
        resyncs = new QueueStatus.Resyncs(resyncs.count() + 1, cause, detail,
                java.time.Instant.ofEpochMilli(System.currentTimeMillis()).toString());
    }

    /** Counts a stall once per blocked operation, when it has lasted {@link #WRITER_STALL_NANOS}. */
    void trackWriterStall(long blockedNanos) {
        if (blockedNanos < WRITER_STALL_NANOS) {
            inWriterStall = false;
            return;
        }
        if (!inWriterStall) {
            inWriterStall = true;
            writerStalls++;
            lastWriterStallAt = java.time.Instant.ofEpochMilli(
                    System.currentTimeMillis() - blockedNanos / 1_000_000).toString();
        }
    }

    void forgetSeen() {
        seenTail = seenHead;
    }
}
