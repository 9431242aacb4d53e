package io.queueenterprise.remote;

import io.aeron.Publication;
import io.queueenterprise.protocol.client.AppendOutcomeDecoder;
import io.queueenterprise.protocol.client.ClientFrameType;
import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.protocol.client.RefusedDecoder;
import io.queueenterprise.protocol.client.WriterClaim;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;

/**
 * One remote write as an explicit step machine (as Aeron's archive and cluster clients poll theirs): {@link #start}
 * then {@link #step} until {@link State#DONE} ({@link #index()}), or until a step throws the write's
 * {@link RemoteQueueException} ({@link State#FAILED}). One method per state; each step does a bounded amount of work
 * and returns how much, so the caller idles when it is 0. Every timer is measured on the {@code now} passed in.
 *
 * <pre>
 *   CONNECTING ──▶ (CLAIMING) ──▶ SENDING ──▶ OFFERING ──▶ AWAITING_ACK ──▶ DONE
 *       ▲  ▲                     │  │             │ │ │
 *       │  └──── link lost ──────┘  └ BACK_PRESSURE│ │ └ silent 250 ms ──▶ RESENDING ──▶ CONNECTING (same node)
 *       │                                           │ └── silent 1 s: failover (leader forgotten) ──▶ CONNECTING
 *       └──── BACKING_OFF ◀── REDIRECTED ◀── retryable refusal (NOT_LEADER names the leader; NO_LEADER, NOT_READY...)
 * </pre>
 *
 * <p>CLAIMING: a connection that has not yet claimed the write's epoch sends the epoch's CLAIM first (a node takes an
 * APPEND only under the epoch its connection claimed), once per connection and epoch.
 *
 * <p>Exactly once: every (re)send carries the same sealed envelope (the same writer epoch and sequence, kept in
 * {@link RemoteQueue#tx}); only the frame sequence and the client's highest term are new. A leader answers a
 * repeat with the original index. Allocation-free while a write is acknowledged on a warm connection; refusals,
 * reconnects and failures allocate (messages, the handshake). Transitions are logged at DEBUG.
 */
final class AppendMachine {
    private static final Logger LOG = LoggerFactory.getLogger(AppendMachine.class);
    /** Silence after which the same APPEND is sent again on the same connection. */
    static final long RESEND_NANOS = 250_000_000L;
    /** Silence after which the node is given up (failover: connect to the leader again, anywhere). */
    static final long SILENCE_NANOS = 1_000_000_000L;
    /** A connection idle this long is replaced before it is used (the node may have closed it: 30 s). */
    static final long IDLE_RECONNECT_NANOS = 10_000_000_000L;
    static final long FIRST_BACKOFF_NANOS = 10_000_000L;

    enum State {
        /** Not writing. */
        IDLE,
        /** Keeps a usable connection to the leader or makes one (the handshake, a blocking sub-step bounded by the deadline). */
        CONNECTING,
        /** Offers the CLAIM of the write's epoch on a connection that has not claimed it. */
        CLAIMING,
        /** Encodes and signs the APPEND around the sealed envelope. */
        SENDING,
        /** Offers it, waiting on back-pressure up to the back-pressure timeout. */
        OFFERING,
        /** Polls for this write's answer. */
        AWAITING_ACK,
        /** The node was silent for the resend interval but heard within the silence limit: the same APPEND again. */
        RESENDING,
        /** A retryable refusal: disconnect, remember the leader it names. */
        REDIRECTED,
        /** Waits out the (doubling) backoff before connecting again. */
        BACKING_OFF,
        DONE,
        FAILED
    }

    private final RemoteQueue queue;
    private final long ackTimeoutNanos;
    private final long backPressureTimeoutNanos;

    private State state = State.IDLE;
    private long epoch;
    private int writerSequence;
    private int envelopeLength;
    private long deadline;
    private boolean sent;
    private ClientRefusal lastRefusal;
    private String lastProblem;
    private long backoffNanos;
    private long backoffUntil;
    private long sentAt;
    private long backPressureDeadline;
    private int frameLength;
    private int claimLength;
    private long index;
    private RemoteQueue.Connection connection;
    /** Counters over the machine's life, for tests and diagnosis. */
    private long sends;
    private long resends;
    private long failovers;
    private long redirects;

    AppendMachine(RemoteQueue queue, long ackTimeoutNanos, long backPressureTimeoutNanos) {
        this.queue = queue;
        this.ackTimeoutNanos = ackTimeoutNanos;
        this.backPressureTimeoutNanos = backPressureTimeoutNanos;
    }

    /** Begins the write whose sealed envelope of {@code envelopeLength} bytes is in the queue's APPEND buffer. */
    void start(long epoch, int writerSequence, int envelopeLength, long now) {
        this.epoch = epoch;
        this.writerSequence = writerSequence;
        this.envelopeLength = envelopeLength;
        this.deadline = now + ackTimeoutNanos;
        this.sent = false;
        this.lastRefusal = null;
        this.lastProblem = null;
        this.backoffNanos = FIRST_BACKOFF_NANOS;
        this.index = -1;
        transition(State.CONNECTING);
    }

    /**
     * One step of the write in its present state; the work done (0: nothing happened, the caller may idle).
     *
     * @throws RemoteQueueException how the write failed (the machine is then {@link State#FAILED})
     */
    int step(long now) {
        try {
            return switch (state) {
                case CONNECTING -> connecting(now);
                case CLAIMING -> claiming(now);
                case SENDING -> sending(now);
                case OFFERING -> offering(now);
                case AWAITING_ACK -> awaitingAck(now);
                case RESENDING -> resending();
                case REDIRECTED -> redirected(now);
                case BACKING_OFF -> backingOff(now);
                case IDLE, DONE, FAILED -> throw new IllegalStateException("no write in progress (" + state + ")");
            };
        } catch (RemoteQueueException e) {
            transition(State.FAILED);
            throw e;
        }
    }

    private int connecting(long now) {
        if (now - deadline > 0) {
            throw ackTimeout(null);
        }
        RemoteQueue.Connection c = queue.connection();
        boolean claimsSpent = c != null && !(c.claimed && c.claimedEpoch == epoch) && c.claims >= WriterClaim.MAX_PER_CONNECTION;
        if (c != null && (!c.leads || now - c.lastHeardNanos > IDLE_RECONNECT_NANOS || claimsSpent)) {
            queue.disconnect();
        }
        if (queue.connection() == null) {
            try {
                queue.connectToLeader(deadline);
            } catch (RemoteQueueException e) {
                if (e.reason() == RemoteQueueException.Reason.NO_LEADER && sent) {
                    throw ackTimeout(e);
                }
                throw e;
            }
            if (envelopeLength > queue.connection().maxEnvelope) {
                throw new RemoteQueueException(queue.queueName(), RemoteQueueException.Reason.TOO_LARGE, ClientRefusal.TOO_LARGE, false,
                        "envelope of " + envelopeLength + " bytes; the node takes up to " + queue.connection().maxEnvelope, null);
            }
        }
        connection = queue.connection();
        if (connection.claimed && connection.claimedEpoch == epoch) {
            transition(State.SENDING);
        } else {
            claimLength = queue.encodeClaim(connection);
            backPressureDeadline = now + backPressureTimeoutNanos;
            transition(State.CLAIMING);
        }
        return 1;
    }

    private int claiming(long now) {
        RemoteQueue.Connection c = connection;
        long result = c.link.offer(queue.claimTx, 0, claimLength);
        if (result > 0) {
            c.claimedEpoch = epoch;
            c.claimed = true;
            c.claims++;
            transition(State.SENDING);
            return 1;
        }
        return notTaken(result, now, c);
    }

    private int sending(long now) {
        frameLength = queue.encodeAppend(connection, epoch, writerSequence, envelopeLength);
        backPressureDeadline = now + backPressureTimeoutNanos;
        transition(State.OFFERING);
        return 1;
    }

    private int offering(long now) {
        RemoteQueue.Connection c = connection;
        long result = c.link.offer(queue.tx, 0, frameLength);
        if (result > 0) {
            sent = true;
            sends++;
            sentAt = now;
            queue.expect(c);
            transition(State.AWAITING_ACK);
            return 1;
        }
        return notTaken(result, now, c);
    }

    /**
     * An offer the publication did not take: a link that is gone is made again; back-pressure is waited out (reading
     * answers meanwhile) until its own or the write's deadline, then a typed refusal.
     */
    private int notTaken(long result, long now, RemoteQueue.Connection c) {
        if (result == Publication.NOT_CONNECTED || result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
            queue.disconnect();
            transition(State.CONNECTING);
            return 1;
        }
        if (now - backPressureDeadline > 0 || now - deadline > 0) {
            throw new RemoteQueueException(queue.queueName(), RemoteQueueException.Reason.BACK_PRESSURE, null, sent,
                    "the publication to " + c.node + " stayed back-pressured for "
                            + backPressureTimeoutNanos / 1_000_000 + " ms", null);
        }
        return queue.pollOnce();
    }

    private int awaitingAck(long now) {
        if (now - deadline > 0) {
            throw ackTimeout(null);
        }
        RemoteQueue.Connection c = connection;
        int work = queue.pollOnce();
        if (queue.takeSessionFrame(c, now)) {
            onAnswer(c, now);
            return work + 1;
        }
        if (now - (sentAt + RESEND_NANOS) > 0) {
            if (now - c.lastHeardNanos > SILENCE_NANOS) {
                lastProblem = "node " + c.node + " went silent";
                failovers++;
                queue.leaderHint = null;
                queue.disconnect();
                transition(State.CONNECTING);
            } else {
                transition(State.RESENDING);
            }
            return work + 1;
        }
        return work;
    }

    private void onAnswer(RemoteQueue.Connection c, long now) {
        ClientFrameType type = queue.frame.type();
        AppendOutcomeDecoder outcome = type == ClientFrameType.APPEND_ACK ? queue.appendAck
                : type == ClientFrameType.APPEND_PENDING ? queue.appendPending : null;
        if (outcome != null && outcome.epoch() == epoch && outcome.writerSequence() == writerSequence) {
            queue.highestTerm = Math.max(queue.highestTerm, outcome.term());
            if (type == ClientFrameType.APPEND_ACK) {
                index = outcome.index();
                transition(State.DONE);
            } else {
                sentAt = now; // pending: held for a quorum; ask again later
            }
            return;
        }
        RefusedDecoder refused = queue.refused;
        if (type == ClientFrameType.REFUSED && refused.epoch() == epoch && refused.writerSequence() == writerSequence) {
            ClientRefusal r = refused.reason();
            lastRefusal = r;
            lastProblem = r + " from " + c.node + ": " + refused.message();
            if (!r.retryable()) {
                throw new RemoteQueueException(queue.queueName(), r == ClientRefusal.TOO_LARGE ? RemoteQueueException.Reason.TOO_LARGE
                        : RemoteQueueException.Reason.REFUSED, r, sent && r == ClientRefusal.REPLAYED, refused.message(), null);
            }
            queue.leaderHint = refused.leaderPort() != 0
                    ? InetSocketAddress.createUnresolved(refused.leaderHost(), refused.leaderPort()) : null;
            transition(State.REDIRECTED);
        }
        // an answer to an earlier write (a late ack of a retry): ignored
    }

    private int resending() {
        resends++;
        transition(State.CONNECTING); // keeps the connection unless it is no longer usable
        return 1;
    }

    private int redirected(long now) {
        redirects++;
        queue.disconnect();
        backoffUntil = Math.min(deadline, now + backoffNanos);
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
        return new RemoteQueueException(queue.queueName(), RemoteQueueException.Reason.ACK_TIMEOUT, lastRefusal, sent,
                "no acknowledgement within " + ackTimeoutNanos / 1_000_000 + " ms" + detail, cause);
    }

    private void transition(State next) {
        if (LOG.isDebugEnabled()) {
            LOG.debug("queue '" + queue.queueName() + "' write " + Long.toHexString(epoch) + "/"
                    + writerSequence + ": " + state + " -> " + next);
        }
        state = next;
    }

    State state() {
        return state;
    }

    /** The acknowledged index ({@link State#DONE}), else -1. */
    long index() {
        return index;
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
}
