package io.queueenterprise.replication.client;

import io.aeron.Publication;
import io.queueenterprise.protocol.client.ClientProtocol;
import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.protocol.client.TailCreditDecoder;
import io.queueenterprise.protocol.client.TailDataEncoder;
import io.queueenterprise.protocol.client.TailEndEncoder;
import io.queueenterprise.protocol.client.TailMode;
import io.queueenterprise.protocol.client.TailOpenDecoder;
import io.queueenterprise.protocol.client.TailStatusEncoder;
import io.queueenterprise.protocol.client.TailStatusKind;
import io.queueenterprise.queue.ReplicaStore;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.collections.Long2ObjectHashMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Remote tails: streams a queue's excerpts, exactly as stored (sealed envelopes; the node holds no key), to clients
 * that asked with TAIL_OPEN, on any replica, leader or follower. Driven by {@link ClientGateway} on the replication
 * duty thread, so the work per cycle is bounded: at most {@link #EXCERPTS_PER_TAIL} excerpts per tail and
 * {@link #BYTES_PER_CYCLE} bytes in all. Flow control is the client's credit (excerpts it may be sent); a tail
 * whose client stops draining its Aeron subscription back-pressures the reply publication, and the tail simply
 * waits (nothing is queued, the duty thread never blocks) until {@link #STALL_NANOS} pass, then ends it
 * SLOW_CONSUMER (counted). Large excerpts go in pieces of at most {@link #MAX_PIECE} bytes.
 */
final class ClientTailSessions {
    private static final Logger LOG = LoggerFactory.getLogger(ClientTailSessions.class);
    /** Largest piece of an excerpt in one TAIL_DATA (the reply channel's 128 KiB terms take 16 KiB messages). */
    static final int MAX_PIECE = 8 * 1024;
    static final int EXCERPTS_PER_TAIL = 64;
    static final int BYTES_PER_CYCLE = 256 * 1024;
    /** Credit beyond this is capped: a client cannot make the node hold more than this many excerpts in flight. */
    static final int MAX_CREDIT = 1 << 16;
    /** A tail with nothing to send says it is alive this often, so a client can tell a dead replica from a quiet queue. */
    static final long HEARTBEAT_NANOS = 250_000_000L;
    /** A client that has not drained its subscription for this long loses the tail (it resumes when it is back). */
    static final long STALL_NANOS = 10_000_000_000L;

    private final HostedQueues node;
    private final String nodeId;
    private final Long2ObjectHashMap<Tail> byConnection = new Long2ObjectHashMap<>();
    private final List<Tail> tails = new ArrayList<>();
    private final ExpandableArrayBuffer tx = new ExpandableArrayBuffer(MAX_PIECE + ClientProtocol.DATA_OVERHEAD + 1024);
    private final TailStatusEncoder statusEncoder = new TailStatusEncoder();
    private final TailDataEncoder dataEncoder = new TailDataEncoder();
    private final TailEndEncoder endEncoder = new TailEndEncoder();
    private final AtomicLongArray counters = new AtomicLongArray(TailCounter.values().length);
    private final AtomicLongArray ends = new AtomicLongArray(ClientRefusal.values().length + 1);
    private int next;

    ClientTailSessions(HostedQueues node, String nodeId) {
        this.node = node;
        this.nodeId = nodeId;
    }

    long count(TailCounter counter) {
        return counters.get(counter.ordinal());
    }

    /** TAIL_ENDs sent for {@code reason}. */
    long ends(ClientRefusal reason) {
        return ends.get(reason.ordinal());
    }

    int size() {
        return tails.size();
    }

    private void add(TailCounter counter, long n) {
        counters.lazySet(counter.ordinal(), counters.get(counter.ordinal()) + n); // one writer thread
    }

    // ------------------------------------------------------------------------------------------------ requests

    /** A verified TAIL_OPEN on a session whose queue it names: replaces the session's tail, if any. */
    void onOpen(ClientGateway.Session s, TailOpenDecoder f, long now) {
        Tail previous = byConnection.remove(s.connection);
        if (previous != null) {
            previous.finished = true; // closed and removed by the next duty cycle
        }
        long tailId = f.tail();
        int q = s.queue;
        ReplicaStore store = node.store(q);
        if (store == null) {
            end(s, tailId, ClientRefusal.NOT_READY, -1, -1, "node " + nodeId + " is still opening queue '" + s.queueName + "'", now);
            return;
        }
        long first;
        long last;
        ReplicaStore.RawTailer raw = null;
        try {
            first = store.firstIndex();
            last = store.lastIndex();
            raw = store.rawTailer();
            long index = f.index();
            long after = -1;
            ClientRefusal refusal = null;
            String why = null;
            switch (f.from()) {
                case START -> raw.toStart();
                case END -> {
                    if (last < 0) {
                        raw.toStart();
                    } else if (raw.moveAfter(last)) {
                        after = last;
                    } else {
                        refusal = ClientRefusal.UNREADABLE;
                        why = "cannot position after its last index 0x" + Long.toHexString(last);
                    }
                }
                case AT -> {
                    if (first >= 0 && index < first) {
                        refusal = ClientRefusal.BEHIND_RETENTION;
                    } else if (last < 0 || index > last || !raw.moveTo(index)) {
                        refusal = ClientRefusal.INDEX_NOT_FOUND;
                    }
                    after = index;
                }
                case AFTER -> {
                    if (first >= 0 && index < first) {
                        if (ReplicaStore.isNext(store.rollCycle(), index, first)) {
                            raw.toStart(); // the excerpt after it is the first one held: no gap
                        } else {
                            refusal = ClientRefusal.BEHIND_RETENTION;
                        }
                    } else if (last < 0 || index > last || !raw.moveAfter(index)) {
                        refusal = ClientRefusal.INDEX_NOT_FOUND;
                    }
                    after = index;
                }
            }
            if (refusal != null) {
                raw.close();
                end(s, tailId, refusal, first, last, why != null ? "node " + nodeId + " " + why : "node " + nodeId
                        + " holds queue '" + s.queueName + "' from 0x" + Long.toHexString(first) + " to 0x" + Long.toHexString(last)
                        + (refusal == ClientRefusal.BEHIND_RETENTION ? ": 0x" + Long.toHexString(index) + " is no longer held (retention)"
                        : ": no index 0x" + Long.toHexString(index)), now);
                return;
            }
            Tail t = new Tail(s, tailId, q, store, raw, f.mode(), Math.min(f.credit(), MAX_CREDIT), now);
            raw = null;
            byConnection.put(s.connection, t);
            tails.add(t);
            add(TailCounter.OPENED, 1);
            int length = statusEncoder.wrap(tx, 0).encode(s.connection, ++s.txSequence, tailId, TailStatusKind.OPENED, after,
                    first, last, node.quorumIndex(q));
            s.mac.sign(tx, 0, length);
            s.send(tx, length, now);
        } catch (RuntimeException e) {
            // Chronicle failing on this node's copy (damage): the client may read from another replica
            LOG.warn("tail of " + s.queueName + " for a remote client could not be opened", e);
            if (raw != null) {
                raw.close();
            }
            end(s, tailId, ClientRefusal.UNREADABLE, -1, -1, "node " + nodeId + " cannot read queue '" + s.queueName + "': " + e, now);
        }
    }

    /** A verified TAIL_CREDIT: the client took excerpts and may be sent {@code grant} more (0: it is still there). */
    void onCredit(ClientGateway.Session s, TailCreditDecoder f) {
        Tail t = byConnection.get(s.connection);
        if (t != null && t.id == f.tail()) {
            t.credit = (int) Math.min(MAX_CREDIT, (long) t.credit + f.grant());
        }
    }

    private void end(ClientGateway.Session s, long tailId, ClientRefusal reason, long first, long last, String message, long now) {
        ends.lazySet(reason.ordinal(), ends.get(reason.ordinal()) + 1);
        int length = endEncoder.wrap(tx, 0).encode(s.connection, ++s.txSequence, tailId, reason, first, last, message);
        s.mac.sign(tx, 0, length);
        s.send(tx, length, now);
    }

    // ------------------------------------------------------------------------------------------------ duty cycle

    /** Sends what each tail may send, within this cycle's budget, starting with a different tail each cycle. */
    int doWork(long now) {
        int n = tails.size();
        if (n == 0) {
            return 0;
        }
        int work = 0;
        int budget = BYTES_PER_CYCLE;
        next = next >= n ? 0 : next;
        for (int i = 0; i < n && budget > 0; i++) {
            Tail t = tails.get((next + i) % n);
            int before = budget;
            budget = t.pump(now, budget);
            work += before - budget;
        }
        next++;
        for (int i = tails.size() - 1; i >= 0; i--) {
            Tail t = tails.get(i);
            if (t.finished) {
                t.close();
                tails.remove(i);
                if (byConnection.get(t.session.connection) == t) {
                    byConnection.remove(t.session.connection);
                }
            }
        }
        return work > 0 ? 1 : 0;
    }

    void close() {
        for (Tail t : tails) {
            t.close();
        }
        tails.clear();
        byConnection.clear();
    }

    /** One client's tail: its position in the node's copy, its credit, the excerpt in hand while pieces go out. */
    private final class Tail {
        final ClientGateway.Session session;
        final long id;
        final int queue;
        final ReplicaStore store;
        final ReplicaStore.RawTailer raw;
        final TailMode mode;
        int credit;
        /** The excerpt read and not yet sent whole: its index and length (-1: none in hand). */
        long handIndex;
        int handLength = -1;
        int pieceOffset;
        long lastSentIndex = -1;
        long lastSentNanos;
        long stalledSinceNanos;
        boolean finished;

        Tail(ClientGateway.Session session, long id, int queue, ReplicaStore store, ReplicaStore.RawTailer raw, TailMode mode,
             int credit, long now) {
            this.session = session;
            this.id = id;
            this.queue = queue;
            this.store = store;
            this.raw = raw;
            this.mode = mode;
            this.credit = credit;
            this.lastSentNanos = now;
        }

        /** Sends within {@code budget} bytes; returns what is left of it. */
        int pump(long now, int budget) {
            ClientGateway.Session s = session;
            if (finished) {
                return budget;
            }
            if (s.closed || s.failed) {
                finished = true;
                return budget;
            }
            if (!s.outbox.isEmpty()) {
                return budget; // frames queued before ours keep their order (the client takes sequences in order)
            }
            if (node.store(queue) != store) {
                finished = true; // a quarantine rebuilt the copy: the client resumes from its last index elsewhere or here
                end(s, id, ClientRefusal.UNREADABLE, -1, -1, "node " + nodeId + " rebuilt its copy of queue '" + s.queueName + "'", now);
                return budget;
            }
            long visible = mode == TailMode.REPLICATED ? node.quorumIndex(queue) : Long.MAX_VALUE;
            int sent = 0;
            try {
                while (sent < EXCERPTS_PER_TAIL && credit > 0 && budget > 0) {
                    if (handLength < 0) {
                        int length = raw.next();
                        if (length < 0) {
                            break;
                        }
                        handIndex = raw.index();
                        handLength = length;
                        pieceOffset = 0;
                    }
                    if (handIndex > visible) {
                        break; // replicated reads: held in hand until a majority holds it
                    }
                    do {
                        int piece = Math.min(MAX_PIECE, handLength - pieceOffset);
                        tx.putBytes(ClientProtocol.DATA_PIECE, raw.bytes(), pieceOffset, piece);
                        int length = dataEncoder.wrap(tx, 0).encodeAround(s.connection, s.txSequence + 1, id, handIndex,
                                handLength, pieceOffset, piece);
                        s.mac.sign(tx, 0, length);
                        long result = s.publication.offer(tx, 0, length);
                        if (result < 0) {
                            return stalled(s, result, now, budget);
                        }
                        s.txSequence++;
                        stalledSinceNanos = 0;
                        lastSentNanos = now;
                        pieceOffset += piece;
                        budget -= piece + ClientProtocol.DATA_OVERHEAD;
                    } while (pieceOffset < handLength);
                    add(TailCounter.EXCERPTS_SENT, 1);
                    add(TailCounter.BYTES_SENT, handLength);
                    lastSentIndex = handIndex;
                    handLength = -1;
                    credit--;
                    sent++;
                }
            } catch (RuntimeException e) {
                LOG.warn("tail of " + s.queueName + " for a remote client failed", e);
                finished = true;
                end(s, id, ClientRefusal.UNREADABLE, -1, -1, "node " + nodeId + " cannot read queue '" + s.queueName + "': " + e, now);
                return budget;
            }
            if (sent == 0 && now - lastSentNanos > HEARTBEAT_NANOS) {
                // first and last are not looked up here (Chronicle scans for them): -1, "not said"
                int length = statusEncoder.wrap(tx, 0).encode(s.connection, s.txSequence + 1, id, TailStatusKind.ALIVE,
                        lastSentIndex, -1, -1, node.quorumIndex(queue));
                s.mac.sign(tx, 0, length);
                if (s.publication.offer(tx, 0, length) > 0) {
                    s.txSequence++;
                    lastSentNanos = now;
                }
            }
            return budget;
        }

        private int stalled(ClientGateway.Session s, long result, long now, int budget) {
            if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
                s.failed = true;
                finished = true;
                return budget;
            }
            add(TailCounter.BACK_PRESSURED_OFFERS, 1);
            if (stalledSinceNanos == 0) {
                stalledSinceNanos = now;
            } else if (now - stalledSinceNanos > STALL_NANOS) {
                add(TailCounter.SLOW_CONSUMERS_CLOSED, 1);
                finished = true;
                // queued behind what the client has not drained; if it never does, the session's reply timeout closes it
                end(s, id, ClientRefusal.SLOW_CONSUMER, -1, -1, "node " + nodeId + " could not send for "
                        + STALL_NANOS / 1_000_000 + " ms: the client does not take what it asked for", now);
            }
            return budget;
        }

        void close() {
            raw.close();
        }
    }
}
