package io.queueenterprise.replication.engine;

import io.aeron.Publication;
import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.wire.AckBody;
import io.queueenterprise.replication.wire.DataBody;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.DataEncoder;
import io.queueenterprise.replication.wire.DescriptorEncoder;
import io.queueenterprise.replication.wire.ExcerptPartEncoder;
import io.queueenterprise.replication.wire.FrameEncoder;
import io.queueenterprise.replication.wire.FrameType;
import io.queueenterprise.replication.wire.HelloBody;
import io.queueenterprise.replication.wire.RefusalBody;
import io.queueenterprise.replication.wire.RefusalReason;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * A leader's side of the data path, for every hosted queue and follower: finds what the library appended (its own
 * tail), answers HELLO with where the copies agree (DESCRIPTOR), streams DATA batches and EXCERPT_PARTs from one
 * tailer per follower and queue under back-pressure, resends a changed descriptor, takes acks and publishes the
 * quorum index. Frames reach it authenticated, in sequence and at this node's term; sessions and heartbeats are the
 * agent's. Duty-cycle thread only.
 */
final class LeaderSession {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderSession.class);

    private final int self;
    private final QueueReplica[] queues;
    private final PeerLink[] peers;
    private final DropCounters drops;
    private final ControlFrames control;
    /** Encodes DATA and EXCERPT_PART frames into each follower's pending buffer. */
    private final FrameEncoder encoder = new FrameEncoder();
    private final DataEncoder dataEncoder = new DataEncoder();
    private final ExcerptPartEncoder partEncoder = new ExcerptPartEncoder();
    private final DescriptorEncoder descriptorEncoder = new DescriptorEncoder();
    private final long[] votes;
    /** The term this node leads, which every frame carries. */
    private long term;
    private long lastDescriptorCheckNanos;
    /**
     * A test's seam (see {@link ReplicationAgent#holdDescriptorChecks}): while set, the periodic look at each queue's
     * descriptor file is skipped, so a race with it is decided by the test rather than by the machine's load.
     */
    private boolean descriptorChecksHeld;
    /**
     * A test's seam (see {@link ReplicationAgent#holdOwnTail}): while set, the leader's own tail finds nothing, as when
     * an excerpt completes after the own tail looked and before a follower's tailer does in the same duty cycle.
     */
    private boolean ownTailHeld;
    /** Marks a follower sent DATA of a queue that had excerpts and no descriptor (see {@link #buildBatch}). */
    private static final byte[] NO_DESCRIPTOR = new byte[0];

    /** Set by {@link #work}: whether this leader may acknowledge in this duty cycle. */
    private boolean acknowledging;

    LeaderSession(int self, QueueReplica[] queues, PeerLink[] peers, DropCounters drops, ControlFrames control) {
        this.self = self;
        this.queues = queues;
        this.peers = peers;
        this.drops = drops;
        this.control = control;
        this.votes = new long[peers.length];
    }

    /**
     * One duty cycle's leading: the own tail, changed descriptors, a batch per follower and queue, the quorum index.
     *
     * @param acknowledging whether this leader may acknowledge now (its lease held and its term confirmed): the
     *                      quorum index is published only then (see {@link #updateQuorum})
     */
    int work(long now, long term, boolean acknowledging) {
        this.term = term;
        this.acknowledging = acknowledging;
        int work = 0;
        boolean checkDescriptors = !descriptorChecksHeld && now - lastDescriptorCheckNanos >= ReplicationAgent.HEARTBEAT_NANOS;
        if (checkDescriptors) {
            lastDescriptorCheckNanos = now;
        }
        long nowMillis = checkDescriptors ? System.currentTimeMillis() : 0;
        for (QueueReplica q : queues) {
            if (!q.active()) {
                continue;
            }
            work += tailSelf(q, now);
            if (checkDescriptors && q.descriptorWatch.mayHaveChanged(nowMillis)) {
                resendChangedDescriptor(q); // reads the file: only when its stamp says it may have changed
            }
            // A queue that had no descriptor when a follower joined gets one before its first DATA: buildBatch, the
            // one gate every excerpt passes on its way to a follower, owes it (not this own tail, which can miss an
            // excerpt that a follower's tailer finds later in the same cycle).
            for (PeerLink p : peers) {
                // a heartbeat the publication had no room for goes first: the lease rests on its echo
                if (p != null && p.established() && !p.heartbeatOwed && descriptorDelivered(p, q)) {
                    work += ship(p, q);
                }
            }
            updateQuorum(q, now);
        }
        return work;
    }

    void holdDescriptorChecks(boolean hold) {
        descriptorChecksHeld = hold;
    }

    void holdOwnTail(boolean hold) {
        ownTailHeld = hold;
    }

    /** The quorum index of a queue moved past what this follower was last told, and no DATA frame is waiting to say it. */
    boolean quorumNewsFor(PeerLink p) {
        for (QueueReplica q : queues) {
            PeerLink.FollowerQueue f = p.progress[q.position];
            if (f.streaming && f.pendingLength == 0 && q.quorumIndex > f.quorumSent) {
                return true;
            }
        }
        return false;
    }

    /**
     * The descriptor changes after followers got it when the first library writer creates it (a new queue) or a
     * rotated key records its fingerprint: followers get the new bytes, with "resume after" at the leader's last
     * index so that they truncate nothing.
     */
    private void resendChangedDescriptor(QueueReplica q) {
        byte[] current = q.store.descriptorBytes();
        if (current == null) {
            return;
        }
        for (PeerLink p : peers) {
            PeerLink.FollowerQueue f = p == null ? null : p.progress[q.position];
            if (p != null && p.established() && f.streaming && !java.util.Arrays.equals(current, f.sentDescriptor)) {
                // "resume after" at or past everything this follower was sent: a mid-stream descriptor truncates
                // nothing (the leader's own tail may be behind the follower's tailer within a cycle)
                f.descriptorOwed = true;
                descriptorDelivered(p, q);
            }
        }
    }

    /**
     * A changed descriptor owed to a streaming follower is offered before any more of the queue's DATA: a control
     * frame lost to back-pressure must not let later excerpts reach the follower ahead of the descriptor they were
     * written under (a follower promoted with excerpts and no descriptor could not serve the queue). DATA and
     * DESCRIPTOR share the follower's publication, so once offered, the descriptor arrives first.
     *
     * @return whether this queue's DATA may be shipped to {@code p}
     */
    private boolean descriptorDelivered(PeerLink p, QueueReplica q) {
        PeerLink.FollowerQueue f = p.progress[q.position];
        if (f.descriptorOwed) {
            f.descriptorOwed = !sendDescriptor(p, q, Math.max(q.lastIndex, f.sentIndex), q.store.firstIndex());
        }
        return !f.descriptorOwed;
    }

    /** The leader's own tail: finds what the library appended (last index, first-sighting times). */
    private int tailSelf(QueueReplica q, long now) {
        if (q.selfTail == null || ownTailHeld) {
            return 0;
        }
        int n = 0;
        long index;
        while (n < ReplicationAgent.SELF_TAIL_PER_CYCLE && (index = q.selfTail.skipNext()) >= 0) {
            q.lastIndex = index;
            q.seen(index, now);
            n++;
        }
        return n;
    }

    /** Sends the next DATA batch of {@code q} to follower {@code p}; back-pressure keeps the frame for the next cycle. */
    private int ship(PeerLink p, QueueReplica q) {
        PeerLink.FollowerQueue f = p.progress[q.position];
        if (!f.streaming || p.sink == null) {
            return 0;
        }
        if (f.pendingLength == 0) {
            buildBatch(p, q, f);
            if (f.pendingLength == 0) {
                return 0;
            }
        }
        long sequence = p.txSequence + 1;
        if (f.pendingSequence != sequence) {
            // Stamped and signed when offered, not when built: a control frame sent while this batch waited under
            // back-pressure took the next sequence, and the follower drops anything not above the last it saw.
            f.pending.putLong(Frame.SEQUENCE_OFFSET, sequence, Frame.ORDER);
            p.txMac.sign(f.pending, 0, f.pendingLength);
            f.pendingSequence = sequence;
        }
        long result = p.sink.offer(f.pending, 0, f.pendingLength);
        if (result > 0) {
            p.txSequence = sequence;
            f.pendingLength = 0;
            if (f.echoIndex < 0 && f.sentIndex >= 0) {
                f.echoIndex = f.sentIndex; // the lease's checkpoint: an ACK covering it echoes this send time
                f.echoSentNanos = System.nanoTime();
            }
            return 1;
        }
        if (result == Publication.NOT_CONNECTED || result == Publication.CLOSED) {
            p.dropSession(); // the follower is gone; it re-handshakes and HELLO tells where it stands
        } else if (result == Publication.MAX_POSITION_EXCEEDED) {
            LOG.error("publication to " + p.id + " reached its maximum position; dropping the session");
            p.dropSession();
        }
        return 0; // BACK_PRESSURED or ADMIN_ACTION: the same frame goes next cycle
    }

    private void buildBatch(PeerLink p, QueueReplica q, PeerLink.FollowerQueue f) {
        ReplicaStore.RawTailer tailer = f.tailer;
        if (f.partTotal > 0) {
            buildPart(p, q, f);
            return;
        }
        if (f.sentDescriptor == null && tailer.next() >= 0) {
            // This follower was answered while the queue had no descriptor, and now the queue has an excerpt, so the
            // descriptor exists (the library writes it first): it goes before any DATA, offered now; if the offer is
            // lost, work() offers it again before this queue's next batch (descriptorDelivered). Its first excerpts
            // must not reach the follower first: one promoted with excerpts and no descriptor could not serve the queue.
            tailer.unread();
            if (q.store.descriptorBytes() != null) {
                f.descriptorOwed = true;
                if (!descriptorDelivered(p, q)) {
                    f.pendingLength = 0;
                    return;
                }
            } else {
                // excerpts and no descriptor (a queue not written by the library): nothing to owe, and no reason to
                // read the file again for every batch; the periodic check sends a descriptor that appears later
                f.sentDescriptor = NO_DESCRIPTOR;
            }
        }
        DataEncoder batch = dataEncoder.begin(
                encoder.begin(f.pending, 0, FrameType.DATA, self, term, p.sessionId, 0), // sequence and MAC: see ship()
                q.position, q.quorumIndex);
        int count = 0;
        int bytes = 0;
        while (count < DataBody.MAX_COUNT) {
            int length = tailer.next();
            if (length < 0) {
                break;
            }
            int needed = DataEncoder.excerptSize(length);
            if (needed > ReplicationAgent.MAX_BATCH_BYTES) {
                if (count > 0) {
                    tailer.unread(); // the batch goes first; the large excerpt follows in pieces
                    break;
                }
                f.partIndex = tailer.index();
                f.partTotal = length;
                f.partSent = 0;
                f.sentIndex = tailer.index();
                buildPart(p, q, f);
                return;
            }
            if (count > 0 && bytes + needed > ReplicationAgent.MAX_BATCH_BYTES) {
                tailer.unread();
                break;
            }
            batch.excerpt(tailer.index(), tailer.bytes(), 0, length);
            bytes += needed;
            count++;
            f.sentIndex = tailer.index();
        }
        if (count == 0) {
            f.pendingLength = 0;
            return;
        }
        f.pendingLength = encoder.finish();
        f.quorumSent = Math.max(f.quorumSent, q.quorumIndex);
        f.pendingSequence = 0;
        q.bytesReplicated += bytes;
    }

    /**
     * The next EXCERPT_PART of the large excerpt in the tailer's array: pieces of up to {@link ReplicationAgent#MAX_BATCH_BYTES},
     * in order, one per frame, so a frame stays far below Aeron's message limit (1 MiB with 8 MiB terms) and a large
     * excerpt shares the publication with other queues' batches instead of holding it for 16 MiB.
     */
    private void buildPart(PeerLink p, QueueReplica q, PeerLink.FollowerQueue f) {
        int piece = Math.min(ReplicationAgent.MAX_BATCH_BYTES, f.partTotal - f.partSent);
        partEncoder.encode(encoder.begin(f.pending, 0, FrameType.EXCERPT_PART, self, term, p.sessionId, 0), // sequence and MAC: see ship()
                q.position, q.quorumIndex, f.partIndex, f.partTotal, f.partSent, f.tailer.bytes(), f.partSent, piece);
        f.pendingLength = encoder.finish();
        f.pendingSequence = 0;
        f.quorumSent = Math.max(f.quorumSent, q.quorumIndex);
        q.bytesReplicated += piece;
        f.partSent += piece;
        if (f.partSent == f.partTotal) {
            f.partTotal = 0; // the last piece: the tailer may read on
            f.partSent = 0;
            f.partIndex = -1;
        }
    }

    /**
     * The highest index a majority holds (the leader counts as holding all it has): published for the library, and
     * only while this leader may acknowledge. A published quorum index IS an acknowledgement (a pipelined appender's
     * watermark): ACKs a leader reads after its lease lapsed (buffered while it was SIGSTOPped, say, while another node
     * was promoted) must not acknowledge anything; the index is published once a fresh majority holds the lease again.
     */
    void updateQuorum(QueueReplica q, long now) {
        if (!acknowledging) {
            return;
        }
        int n = peers.length;
        int v = 0;
        for (int i = 0; i < n; i++) {
            if (i == self) {
                votes[v++] = q.lastIndex;
            } else {
                PeerLink.FollowerQueue f = peers[i].progress[q.position];
                votes[v++] = Math.min(f.durableIndex, q.lastIndex);
            }
        }
        java.util.Arrays.sort(votes, 0, v);
        long quorum = votes[v - (n / 2 + 1)]; // the (majority)-th highest
        if (quorum > q.quorumIndex) {
            q.quorumIndex = quorum;
            q.store.publishQuorumIndex(quorum);
            q.quorumReached(quorum, now, q.spec.ackMode() == AckMode.QUORUM);
        }
    }

    void onHello(PeerLink p, HelloBody hello, long term) {
        this.term = term;
        for (PeerLink.FollowerQueue f : p.progress) {
            f.echoIndex = -1; // streamed again from where the follower stands: an older checkpoint proves nothing
        }
        if (hello.queueCount() != queues.length) {
            control.refuse(p, term, p.sessionId, RefusalReason.QUEUE_MISMATCH, RefusalBody.NO_QUEUE, queues.length,
                    "follower hosts " + hello.queueCount() + " queues, leader " + queues.length);
            return;
        }
        for (int q = 0; q < queues.length; q++) {
            if (!hello.queueName(q).equals(queues[q].spec.name())) {
                control.refuse(p, term, p.sessionId, RefusalReason.QUEUE_MISMATCH, q, 0, "queue " + q + " is '" + queues[q].spec.name()
                        + "' on the leader, '" + hello.queueName(q) + "' on the follower");
                return;
            }
        }
        long now = System.nanoTime();
        for (int q = 0; q < queues.length; q++) {
            QueueReplica queue = queues[q];
            if (!queue.active() || hello.lastIndex(q) == HelloBody.NOT_OPEN) {
                p.progress[q].reset(); // not open on one side yet: the follower says HELLO again when it has opened it
                continue;
            }
            if (queue.damage != null) {
                p.progress[q].reset();
                control.refuse(p, term, p.sessionId, RefusalReason.CANNOT_STORE, q, -1, "the leader's copy of '" + queue.spec.name()
                        + "' is damaged: " + queue.damage);
                continue;
            }
            tailSelf(queue, now);
            while (tailSelf(queue, now) == ReplicationAgent.SELF_TAIL_PER_CYCLE) {
                // catch the own tail up fully: the shared end is computed against the last index held
            }
            List<TermHistory.Entry> followerHistory = new ArrayList<>();
            for (int i = 0; i < hello.termCount(q); i++) {
                followerHistory.add(new TermHistory.Entry(hello.term(q, i), hello.previousLastIndex(q, i)));
            }
            long followerLast = hello.lastIndex(q);
            long shared = followerLast < 0 ? -1
                    : TermHistory.sharedEnd(queue.history.entries(), queue.lastIndex, followerHistory, followerLast);
            PeerLink.FollowerQueue f = p.progress[q];
            f.reset();
            f.durableIndex = -1;
            long first = queue.store.firstIndex();
            ReplicaStore.RawTailer tailer = queue.store.rawTailer();
            boolean positioned;
            if (shared < 0) {
                tailer.toStart();
                positioned = true;
            } else {
                try {
                    positioned = tailer.moveAfter(shared);
                } catch (RuntimeException missingCycle) { // the cycle file holding it was deleted under Chronicle
                    positioned = false;
                }
            }
            if (!positioned) {
                tailer.close();
                f.state = QueueStatus.State.BEHIND_RETENTION;
                control.refuse(p, term, p.sessionId, RefusalReason.BEHIND_RETENTION, q, first, "the follower needs the excerpt after 0x"
                        + Long.toHexString(shared) + " but the leader's first index is 0x" + Long.toHexString(first));
                continue;
            }
            f.tailer = tailer;
            f.streaming = true;
            f.state = QueueStatus.State.CATCHING_UP;
            f.descriptorOwed = false; // lost or not: a follower that gets no answer to its HELLO asks again, and takes no DATA meanwhile
            sendDescriptor(p, queue, shared, first);
        }
    }

    /** @return whether the frame was offered (false: lost; a follower that asked with HELLO asks again) */
    private boolean sendDescriptor(PeerLink p, QueueReplica q, long resumeAfter, long first) {
        byte[] descriptorBytes = q.store.descriptorBytes();
        p.progress[q.position].sentDescriptor = descriptorBytes;
        List<TermHistory.Entry> entries = q.history.entries();
        DescriptorEncoder out = descriptorEncoder.begin(control.session(FrameType.DESCRIPTOR, term, p), q.position,
                resumeAfter, first, entries.size());
        for (TermHistory.Entry e : entries) {
            out.term(e.term(), e.previousLastIndex());
        }
        out.descriptor(descriptorBytes);
        return control.sendSession(p);
    }

    /**
     * @return the send time (this leader's clock) of the lease checkpoint the ACK covers ({@link LeaderLease}): the
     * follower wrote an excerpt first sent to it in this session then, so it was at this term after it; 0 when none
     */
    long onAck(PeerLink p, AckBody ack) {
        int q = ack.queue();
        if (q >= queues.length) {
            drops.increment(DropReason.UNEXPECTED);
            return 0;
        }
        PeerLink.FollowerQueue f = p.progress[q];
        if (ack.durableIndex() > f.durableIndex) {
            f.durableIndex = ack.durableIndex();
        }
        f.state = ack.state();
        if (f.echoIndex >= 0 && ack.durableIndex() >= f.echoIndex) {
            f.echoIndex = -1;
            return f.echoSentNanos;
        }
        return 0;
    }
}
