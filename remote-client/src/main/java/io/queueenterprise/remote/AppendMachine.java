package io.queueenterprise.remote;

import io.aeron.Publication;
import io.queueenterprise.protocol.client.AppendAckDecoder;
import io.queueenterprise.protocol.client.AppendPendingDecoder;
import io.queueenterprise.protocol.client.ClientFrameType;
import io.queueenterprise.protocol.client.ClientProtocol;
import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.protocol.client.RefusedDecoder;
import io.queueenterprise.protocol.client.WriterClaim;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;

/**
 * The window of remote appends as an explicit step machine (as Aeron's archive and cluster clients poll theirs): the
 * appender adds sealed appends to the {@link AppendWindow}; {@link #step} sends them in writer-sequence order, takes
 * the node's coalesced acknowledgements and hands each settled append to {@link Settled} in order. One method per
 * state; each step does a bounded amount of work and returns how much, so the caller idles when it is 0. Every timer
 * is measured on the {@code now} passed in.
 *
 * <pre>
 *   IDLE ──▶ CONNECTING ──▶ (CLAIMING) ──▶ STREAMING ──▶ IDLE (window empty)
 *              ▲  ▲                          │ │ │
 *              │  └──── link lost ───────────┘ │ └ quiet 250 ms: the window again from its oldest append (same node)
 *              │                               └── silent 1 s: failover (leader forgotten) ──▶ CONNECTING
 *              └──── BACKING_OFF ◀── REDIRECTED ◀── retryable refusal (NOT_LEADER names the leader; NO_LEADER, NOT_READY...)
 * </pre>
 *
 * <p>Order and exactly once: the window is sent in writer-sequence order, and every (re)send carries the same sealed
 * envelope (only the frame sequence and the client's highest term are new). A new connection gets the whole
 * unsettled window again from its oldest append; a node answers each one it already holds with its original index
 * (its writer-session table, on a new leader too). A SEQUENCE_GAP names the sequence the node expects: the window is
 * sent again from there (never reordered). An append settles as acknowledged once its index is known and every
 * older one settled; any failure (no acknowledgement of the oldest by its deadline, a refusal retrying cannot fix,
 * back-pressure past its timeout) settles the whole window as failed, each append saying whether it may be in the
 * queue, and the appender continues under a new writer epoch. Allocation-free while appends are acknowledged on a
 * warm connection; refusals, reconnects and failures allocate (messages, the handshake). Transitions are logged at
 * DEBUG.
 */
final class AppendMachine {
    private static final Logger LOG = LoggerFactory.getLogger(AppendMachine.class);
    /** Quiet this long (nothing heard, nothing acknowledged) with appends unsettled: the window again, same connection. */
    static final long RESEND_NANOS = 250_000_000L;
    /** Silence after which the node is given up (failover: connect to the leader again, anywhere). */
    static final long SILENCE_NANOS = 1_000_000_000L;
    /** A connection idle this long is replaced before it is used (the node may have closed it: 30 s). */
    static final long IDLE_RECONNECT_NANOS = 10_000_000_000L;
    static final long FIRST_BACKOFF_NANOS = 10_000_000L;
    /** Appends offered per step (the rest on the next: answers are read between). */
    static final int SENDS_PER_STEP = 64;

    /** Where settled appends go, oldest first. */
    interface Settled {
        void acknowledged(long correlation, boolean blocking, long index);

        void failed(long correlation, boolean blocking, RemoteQueueException failure);
    }

    enum State {
        /** Nothing in the window. */
        IDLE,
        /** Keeps a usable connection to the leader or makes one (the handshake, a blocking sub-step bounded by the deadline). */
        CONNECTING,
        /** Offers the CLAIM of the window's epoch on a connection that has not claimed it. */
        CLAIMING,
        /** Offers the window's unsent appends in order and reads the answers. */
        STREAMING,
        /** A retryable refusal: disconnect, remember the leader it names. */
        REDIRECTED,
        /** Waits out the (doubling) backoff before connecting again. */
        BACKING_OFF
    }

    private final RemoteQueue queue;
    private final AppendWindow window;
    private final Settled settled;
    private final long backPressureTimeoutNanos;
    private final long ackTimeoutNanos;

    private State state = State.IDLE;
    private ClientRefusal lastRefusal;
    private String lastProblem;
    private long backoffNanos = FIRST_BACKOFF_NANOS;
    private long backoffUntil;
    /** When the window was last sent again from its oldest append (a connection, a rewind): the quiet timer's start. */
    private long rewoundAt;
    /** Back-pressure on the present offer since (0: none). */
    private long backPressuredSince;
    private int claimLength;
    private int lastGapSequence = -1;
    /** A refusal retrying cannot fix: from this writer sequence on, nothing of the window was appended. */
    private int notAppendedFrom;
    private boolean notAppendedKnown;
    private long lastGapAt;
    private RemoteQueue.Connection connection;
    /** Counters over the machine's life, for tests and diagnosis. */
    private long sends;
    private long resends;
    private long failovers;
    private long redirects;
    private long ackFrames;
    private long batchFrames;
    private long lastStepNanos;

    AppendMachine(RemoteQueue queue, AppendWindow window, Settled settled, long ackTimeoutNanos, long backPressureTimeoutNanos) {
        this.queue = queue;
        this.window = window;
        this.settled = settled;
        this.ackTimeoutNanos = ackTimeoutNanos;
        this.backPressureTimeoutNanos = backPressureTimeoutNanos;
    }

    /** When the machine was last stepped (sent what waited, read answers). */
    long lastStepNanos() {
        return lastStepNanos;
    }

    /** An append was added to the window: starts the machine when it was idle. */
    void added() {
        if (state == State.IDLE) {
            lastRefusal = null;
            lastProblem = null;
            backoffNanos = FIRST_BACKOFF_NANOS;
            transition(State.CONNECTING);
        }
    }

    /** One step in the present state; the work done (0: nothing happened, the caller may idle). */
    int step(long now) {
        lastStepNanos = now;
        if (state != State.IDLE && !window.isEmpty() && now - window.headDeadline() > 0) {
            failWindow(ackTimeout(null));
            return 1;
        }
        try {
            return switch (state) {
                case IDLE -> idle(now);
                case CONNECTING -> connecting(now);
                case CLAIMING -> claiming(now);
                case STREAMING -> streaming(now);
                case REDIRECTED -> redirected(now);
                case BACKING_OFF -> backingOff(now);
            };
        } catch (RemoteQueueException e) {
            failWindow(e);
            return 1;
        }
    }

    /** Nothing to send: answers that still arrive (late acknowledgements of settled appends) are read and dropped. */
    private int idle(long now) {
        int work = queue.pollOnce();
        RemoteQueue.Connection c = queue.connection();
        while (c != null && queue.takeSessionFrame(c, now)) {
            work++;
            work += queue.pollOnce();
        }
        return work;
    }

    private int connecting(long now) {
        RemoteQueue.Connection c = queue.connection();
        long epoch = window.epoch();
        boolean claimsSpent = c != null && !(c.claimed && c.claimedEpoch == epoch) && c.claims >= WriterClaim.MAX_PER_CONNECTION;
        if (c != null && (!c.leads || now - c.lastHeardNanos > IDLE_RECONNECT_NANOS || claimsSpent)) {
            queue.disconnect();
        }
        if (queue.connection() == null) {
            try {
                queue.connectToLeader(window.headDeadline());
            } catch (RemoteQueueException e) {
                if (e.reason() == RemoteQueueException.Reason.NO_LEADER && anySent()) {
                    throw ackTimeout(e);
                }
                throw e;
            }
        }
        connection = queue.connection();
        int largest = largestEnvelope();
        if (largest > connection.maxEnvelope) {
            throw new RemoteQueueException(queue.queueName(), RemoteQueueException.Reason.TOO_LARGE, ClientRefusal.TOO_LARGE, false,
                    "envelope of " + largest + " bytes; the node takes up to " + connection.maxEnvelope, null);
        }
        queue.expect(connection);
        window.rewind();
        rewoundAt = now;
        backPressuredSince = 0;
        if (connection.claimed && connection.claimedEpoch == epoch) {
            transition(State.STREAMING);
        } else {
            claimLength = queue.encodeClaim(connection);
            transition(State.CLAIMING);
        }
        return 1;
    }

    private int largestEnvelope() {
        int largest = 0;
        for (int i = 0; i < window.size(); i++) {
            largest = Math.max(largest, window.envelopeLength(i));
        }
        return largest;
    }

    /**
     * How many unsent appends from {@code from} on go in one APPEND_BATCH (at most {@code most}): consecutive writer
     * sequences whose entries fit the link's batch bytes. Below 2, the append goes alone as an APPEND.
     */
    private int batchable(RemoteQueue.Connection c, int from, int most) {
        int max = Math.min(Math.min(most, ClientProtocol.MAX_BATCH_APPENDS), window.size() - from);
        int bytes = ClientProtocol.BATCH_OVERHEAD;
        int first = window.sequence(from);
        int n = 0;
        while (n < max && window.sequence(from + n) == first + n) {
            int entry = ClientProtocol.batchEntryLength(window.envelopeLength(from + n));
            if (bytes + entry > c.maxBatchBytes) {
                break;
            }
            bytes += entry;
            n++;
        }
        return n;
    }

    private boolean anySent() {
        return window.size() > 0 && window.headSent();
    }

    private int claiming(long now) {
        RemoteQueue.Connection c = connection;
        long result = c.link.offer(queue.claimTx, 0, claimLength);
        if (result > 0) {
            c.claimedEpoch = window.epoch();
            c.claimed = true;
            c.claims++;
            backPressuredSince = 0;
            transition(State.STREAMING);
            return 1;
        }
        return notTaken(result, now, c);
    }

    private int streaming(long now) {
        RemoteQueue.Connection c = connection;
        int work = 0;
        for (int n = 0; n < SENDS_PER_STEP && window.hasUnsent(); ) {
            int next = window.nextToSend();
            int count = batchable(c, next, SENDS_PER_STEP - n);
            long result;
            if (count > 1) {
                // several small appends: one frame, one session MAC, one fragment for the node to take
                result = c.link.offer(queue.batchTx, 0, queue.encodeAppendBatch(c, window, next, count));
            } else {
                count = 1;
                int offset = window.offset(next);
                int length = queue.encodeAppend(c, window.frames(), offset, window.epoch(), window.sequence(next), window.envelopeLength(next));
                result = c.link.offer(window.frames(), offset, length);
            }
            if (result <= 0) {
                return work + notTaken(result, now, c);
            }
            backPressuredSince = 0;
            for (int k = 0; k < count; k++) {
                window.markSent(next + k);
            }
            if (count > 1) {
                batchFrames++;
            }
            sends += count;
            work += count;
            n += count;
        }
        work += queue.pollOnce();
        while (state == State.STREAMING && queue.takeSessionFrame(c, now)) {
            onAnswer(c, now);
            work++;
            work += queue.pollOnce();
        }
        if (state != State.STREAMING) {
            return work + 1;
        }
        if (window.isEmpty()) {
            transition(State.IDLE);
            return work + 1;
        }
        if (now - Math.max(rewoundAt, c.lastHeardNanos) > RESEND_NANOS) {
            if (now - c.lastHeardNanos > SILENCE_NANOS) {
                lastProblem = "node " + c.node + " went silent";
                failovers++;
                queue.leaderHint = null;
                queue.disconnect();
                transition(State.CONNECTING);
            } else {
                resends++;
                window.rewind();
                rewoundAt = now;
                transition(State.CONNECTING); // keeps the connection unless it is no longer usable
            }
            return work + 1;
        }
        return work;
    }

    /**
     * An offer the publication did not take: a link that is gone is made again; back-pressure is waited out (reading
     * answers meanwhile) until its own timeout, then the window fails.
     */
    private int notTaken(long result, long now, RemoteQueue.Connection c) {
        if (result == Publication.NOT_CONNECTED || result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
            queue.disconnect();
            transition(State.CONNECTING);
            return 1;
        }
        if (backPressuredSince == 0) {
            backPressuredSince = now;
        } else if (now - backPressuredSince > backPressureTimeoutNanos) {
            throw new RemoteQueueException(queue.queueName(), RemoteQueueException.Reason.BACK_PRESSURE, null, anySent(),
                    "the publication to " + c.node + " stayed back-pressured for "
                            + backPressureTimeoutNanos / 1_000_000 + " ms", null);
        }
        int work = queue.pollOnce();
        while (queue.takeSessionFrame(c, now)) {
            onAnswer(c, now);
            work++;
        }
        return work;
    }

    private void onAnswer(RemoteQueue.Connection c, long now) {
        ClientFrameType type = queue.frame.type();
        if (type == ClientFrameType.APPEND_ACK) {
            AppendAckDecoder ack = queue.appendAck;
            queue.highestTerm = Math.max(queue.highestTerm, ack.term());
            ackFrames++;
            int first = ack.firstSequence();
            for (int i = 0, n = ack.count(); i < n; i++) {
                window.acknowledge(ack.epoch(), first + i, ack.index(i));
            }
            settleAcknowledged();
            backoffNanos = FIRST_BACKOFF_NANOS;
            return;
        }
        if (type == ClientFrameType.APPEND_PENDING) {
            AppendPendingDecoder pending = queue.appendPending;
            queue.highestTerm = Math.max(queue.highestTerm, pending.term());
            return; // held for a quorum: the node is alive (heard), the ack follows
        }
        RefusedDecoder refused = queue.refused;
        if (type != ClientFrameType.REFUSED || refused.epoch() != window.epoch() || window.isEmpty()) {
            return; // an answer about an earlier window: ignored
        }
        ClientRefusal r = refused.reason();
        lastRefusal = r;
        if (r == ClientRefusal.SEQUENCE_GAP) {
            onGap(refused.writerSequence(), now);
            return;
        }
        lastProblem = r + " from " + c.node + ": " + refused.message();
        if (!r.retryable()) {
            // the refused one and every later one were not appended (REPLAYED: it may be); older ones sent may have been
            notAppendedFrom = r == ClientRefusal.REPLAYED ? refused.writerSequence() + 1 : refused.writerSequence();
            notAppendedKnown = true;
            throw new RemoteQueueException(queue.queueName(), r == ClientRefusal.TOO_LARGE ? RemoteQueueException.Reason.TOO_LARGE
                    : RemoteQueueException.Reason.REFUSED, r, anySent() && r == ClientRefusal.REPLAYED, refused.message(), null);
        }
        queue.leaderHint = refused.leaderPort() != 0
                ? InetSocketAddress.createUnresolved(refused.leaderHost(), refused.leaderPort()) : null;
        transition(State.REDIRECTED);
    }

    /**
     * The node expects writer sequence {@code expected}: the window goes again from there, in order. Refusals of the
     * later appends already on their way name the same sequence: one rewind per resend interval answers them all.
     */
    private void onGap(int expected, long now) {
        if (expected == lastGapSequence && now - lastGapAt < RESEND_NANOS) {
            return;
        }
        lastGapSequence = expected;
        lastGapAt = now;
        if (expected - window.headSequence() < 0) {
            // the node lacks appends this client saw acknowledged (an async-mode failover lost them): the window cannot follow
            throw new RemoteQueueException(queue.queueName(), RemoteQueueException.Reason.REFUSED, ClientRefusal.SEQUENCE_GAP,
                    false, "node " + connection.node + " expects writer sequence " + (expected & 0xFFFF_FFFFL) + ", before this"
                    + " window's oldest " + (window.headSequence() & 0xFFFF_FFFFL) + ": acknowledged appends were lost", null);
        }
        if (window.rewindTo(expected)) {
            resends++;
            rewoundAt = now;
        }
    }

    /** Hands every acknowledged append at the window's head to {@link #settled}, oldest first. */
    private void settleAcknowledged() {
        while (window.headAcknowledged()) {
            long correlation = window.headCorrelation();
            boolean blocking = window.headBlocking();
            long index = window.headIndex();
            window.removeHead();
            settled.acknowledged(correlation, blocking, index);
        }
    }

    /**
     * Settles every append in the window as failed: one that was sent may be in the queue (unless a refusal said it
     * and the later ones were not appended), one never sent is not.
     */
    private void failWindow(RemoteQueueException cause) {
        transition(State.IDLE);
        boolean refusal = notAppendedKnown;
        notAppendedKnown = false;
        while (!window.isEmpty()) {
            long correlation = window.headCorrelation();
            boolean blocking = window.headBlocking();
            boolean mayBeAppended = window.headSent() && !(refusal && window.headSequence() - notAppendedFrom >= 0);
            RemoteQueueException failure = mayBeAppended == cause.mayBeAppended() ? cause
                    : new RemoteQueueException(queue.queueName(), cause.reason(), cause.refusal(), mayBeAppended,
                    "with writer sequence " + (window.headSequence() & 0xFFFF_FFFFL) + " of its window: " + cause.getMessage(), cause);
            window.removeHead();
            settled.failed(correlation, blocking, failure);
        }
    }

    private int redirected(long now) {
        redirects++;
        queue.disconnect();
        backoffUntil = Math.min(window.headDeadline(), now + backoffNanos);
        backoffNanos = Math.min(RemoteQueue.MAX_BACKOFF_NANOS, backoffNanos * 2);
        transition(State.BACKING_OFF);
        return 1;
    }

    private int backingOff(long now) {
        if (now - backoffUntil >= 0) {
            transition(State.CONNECTING);
            return 1;
        }
        return queue.pollOnce();
    }

    private RemoteQueueException ackTimeout(RemoteQueueException cause) {
        String detail = cause != null ? ": " + cause.getMessage() : lastProblem == null ? "" : "; last: " + lastProblem;
        return new RemoteQueueException(queue.queueName(), RemoteQueueException.Reason.ACK_TIMEOUT, lastRefusal, anySent(),
                "no acknowledgement within " + ackTimeoutNanos / 1_000_000 + " ms" + detail, cause);
    }

    private void transition(State next) {
        if (next != state && LOG.isDebugEnabled()) {
            LOG.debug("queue '" + queue.queueName() + "' window of " + window.size() + " from "
                    + (window.isEmpty() ? "-" : Long.toHexString(window.epoch()) + "/" + window.headSequence()) + ": " + state + " -> " + next);
        }
        state = next;
    }

    State state() {
        return state;
    }

    long sends() {
        return sends;
    }

    long resends() {
        return resends;
    }

    long failovers() {
        return failovers;
    }

    long redirects() {
        return redirects;
    }

    long ackFrames() {
        return ackFrames;
    }

    /** APPEND_BATCH frames sent (each carried several of {@link #sends}). */
    long batchFrames() {
        return batchFrames;
    }
}
