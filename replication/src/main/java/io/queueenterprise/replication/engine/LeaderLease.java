package io.queueenterprise.replication.engine;

/**
 * A leader's lease: whether it may acknowledge now, from what its followers echoed of its own clock. Every leader
 * HEARTBEAT carries the leader's clock ({@code System.nanoTime}) when it was sent; a follower's HEARTBEAT echoes the
 * latest leader clock it received in its session. An echo of {@code s} proves the follower still followed this leader
 * at this term after {@code s}; the leader holds its lease until {@code s + timeout} for the echo that completes a
 * majority with itself (the {@code majority - 1}-th most recent echo). Counting from the leader's own send time, not
 * from when the echo arrived, is what makes a delayed frame harmless: an echo that sat in a buffer while this process
 * was stopped (SIGSTOP, a long pause) extends nothing past its send time plus the timeout. Only this node's clock
 * is read, never compared with another node's.
 *
 * <p>A leader acknowledges only once its term is <b>confirmed</b>: it held the lease (a majority at its term), and at
 * a term above 1, a further {@code timeout + margin} passed since it first did. The followers of that first
 * majority had left any older term before they answered at this one, so an older leader's lease, which needs one of
 * them (two majorities meet), ended by then plus its timeout. Term 1 had no predecessor. Once confirmed, the node
 * stays confirmed for the term: a lease lost and regained later needs no new wait.
 *
 * <p>A 1-replica cluster always holds it; a timeout of 0 turns the lease off (always held, confirmed at once).
 * Duty-cycle thread only; allocation-free.
 */
final class LeaderLease {
    /** Returned by {@link #acknowledgeUntil} when the node may not acknowledge now. */
    static final long NOT_HELD = Long.MIN_VALUE;
    /** Returned by {@link #acknowledgeUntil} when the lease does not lapse (1 replica, or the lease turned off). */
    static final long NEVER_LAPSES = Long.MAX_VALUE;
    private static final long NONE = Long.MIN_VALUE;

    private final int self;
    private final int majority;
    private final long timeoutNanos;
    private final long marginNanos;
    /** Per peer: the latest leader clock it echoed at this term, NONE if none. */
    private final long[] echoed;
    /** Scratch for finding the majority's echo: no allocation per cycle. */
    private final long[] sorted;
    private long term;
    private boolean leading;
    private long firstHeldNanos = NONE;
    private boolean confirmed;

    /**
     * @param replicas     every replica of the cluster, this node included
     * @param timeoutNanos how long an echo keeps the lease; 0: the lease is off
     */
    LeaderLease(int replicas, int self, long timeoutNanos) {
        if (replicas < 1 || self < 0 || self >= replicas || timeoutNanos < 0) {
            throw new IllegalArgumentException("replicas " + replicas + ", self " + self + ", timeout " + timeoutNanos);
        }
        this.self = self;
        this.majority = replicas / 2 + 1;
        this.timeoutNanos = timeoutNanos;
        this.marginNanos = margin(timeoutNanos);
        this.echoed = new long[replicas];
        this.sorted = new long[replicas];
        java.util.Arrays.fill(echoed, NONE);
    }

    /**
     * The margin a newly confirmed leader adds to the timeout: a tenth of it, at least 50 ms. It covers the two clocks'
     * rate difference over one timeout (parts per million on any working clock) and the time between an old leader's
     * last check and its acknowledgement reaching the caller, many times over.
     */
    static long margin(long timeoutNanos) {
        return timeoutNanos == 0 ? 0 : Math.max(timeoutNanos / 10, 50_000_000L);
    }

    /** A majority of {@code replicas}: this node and the followers it needs. */
    int majority() {
        return majority;
    }

    long timeoutNanos() {
        return timeoutNanos;
    }

    /** This node leads {@code term} from now (promoted, or restarted as its leader): nothing echoed yet, not confirmed. */
    void lead(long term) {
        this.term = term;
        this.leading = true;
        java.util.Arrays.fill(echoed, NONE);
        firstHeldNanos = NONE;
        confirmed = false;
    }

    /** This node stops leading (follow, fence, standby): it acknowledges nothing. */
    void stop() {
        leading = false;
        java.util.Arrays.fill(echoed, NONE);
        firstHeldNanos = NONE;
        confirmed = false;
    }

    /**
     * A follower's authenticated HEARTBEAT at this node's term echoed {@code echoedNanos} of this node's clock
     * ({@code 0}: it has received no leader heartbeat in this session yet). An echo from the future (above
     * {@code now}) is not one this node sent and is ignored.
     */
    void echoed(int peer, long echoedNanos, long now) {
        if (!leading || peer == self || echoedNanos == 0 || echoedNanos - now > 0) {
            return;
        }
        if (echoed[peer] == NONE || echoedNanos - echoed[peer] > 0) {
            echoed[peer] = echoedNanos;
        }
    }

    /** The latest echo of {@code peer} ({@link Long#MIN_VALUE}: none at this term). */
    long lastEcho(int peer) {
        return echoed[peer];
    }

    /**
     * Until when the lease holds, from the echoes alone: the send time of the echo that completes a majority, plus
     * the timeout; {@link #NEVER_LAPSES} with 1 replica or the lease off; {@link #NOT_HELD} without a majority.
     */
    long expiresAt() {
        if (majority == 1 || timeoutNanos == 0) {
            return NEVER_LAPSES;
        }
        int n = 0;
        for (int i = 0; i < echoed.length; i++) {
            if (i != self && echoed[i] != NONE) {
                sorted[n++] = echoed[i];
            }
        }
        int needed = majority - 1; // followers besides this node
        if (n < needed) {
            return NOT_HELD;
        }
        // the needed-th most recent echo: a partial selection sort over at most Frame.MAX_PEERS values
        for (int k = 0; k < needed; k++) {
            int best = k;
            for (int j = k + 1; j < n; j++) {
                if (sorted[j] - sorted[best] > 0) {
                    best = j;
                }
            }
            long t = sorted[k];
            sorted[k] = sorted[best];
            sorted[best] = t;
        }
        return sorted[needed - 1] + timeoutNanos;
    }

    /** Whether the lease holds at {@code now}, from the echoes alone. */
    boolean held(long now) {
        long until = expiresAt();
        return until == NEVER_LAPSES || until != NOT_HELD && until - now > 0;
    }

    /**
     * Until when this node may acknowledge, as of {@code now}: the lease's expiry once the term is confirmed,
     * {@link #NOT_HELD} before that, without the lease or when not leading. Advances the confirmation; call every
     * duty cycle while leading.
     */
    long acknowledgeUntil(long now) {
        if (!leading) {
            return NOT_HELD;
        }
        long until = expiresAt();
        boolean held = until == NEVER_LAPSES || until != NOT_HELD && until - now > 0;
        if (!held) {
            return NOT_HELD;
        }
        if (!confirmed) {
            if (firstHeldNanos == NONE) {
                firstHeldNanos = now;
            }
            confirmed = term <= 1 || majority == 1 || timeoutNanos == 0
                    || now - firstHeldNanos >= timeoutNanos + marginNanos;
            if (!confirmed) {
                return NOT_HELD;
            }
        }
        return until;
    }

    boolean confirmed() {
        return confirmed;
    }

    /** When the lease first held at this term ({@link Long#MIN_VALUE}: not yet). */
    long firstHeldNanos() {
        return firstHeldNanos;
    }
}
