package io.queueenterprise.replication.engine;

import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.ReplicationException;
import io.queueenterprise.replication.wire.DataBody;
import io.queueenterprise.replication.wire.DescriptorBody;
import io.queueenterprise.replication.wire.ExcerptPartBody;
import io.queueenterprise.replication.wire.AckEncoder;
import io.queueenterprise.replication.wire.FrameType;
import io.queueenterprise.replication.wire.HeartbeatBody;
import io.queueenterprise.replication.wire.HelloBody;
import io.queueenterprise.replication.wire.HelloEncoder;
import io.queueenterprise.replication.wire.RefusalReason;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * A follower's side of the data path, for every hosted queue: says where it stands (HELLO), takes the leader's
 * DESCRIPTOR (quarantining what diverged), hands DATA batches and assembled EXCERPT_PARTs to the queue's
 * {@link QueueWriter} at their indexes with no gap, acknowledges what the writer has written, and follows the
 * leader's heartbeats (quorum index, LIVE, disk room again). Frames reach it authenticated, in sequence and at this
 * node's term; the session itself (handshake, timeouts) is the agent's. Duty-cycle thread only.
 *
 * <p>Back-pressure: a frame for a queue whose writer's ring has no room for it is left unread in the subscription
 * (the agent polls no further this cycle, so Aeron's flow control slows the leader) for up to
 * {@link #WRITER_WAIT_NANOS}; a writer that stays behind longer is blocked inside Chronicle (a stalled or dead
 * process's write lock), and one queue must not hold up the others behind it in the same subscription: that queue's
 * frames are then passed over, and it resynchronises through HELLO from what its writer wrote once it drained.
 */
final class FollowerSession {
    private static final Logger LOG = LoggerFactory.getLogger(FollowerSession.class);
    /** How long the subscription is left unread for one queue's full writer ring before its frames are passed over. */
    static final long WRITER_WAIT_NANOS = 100_000_000L;

    private final QueueReplica[] queues;
    private final DropCounters drops;
    private final ControlFrames control;
    private final HelloEncoder helloEncoder = new HelloEncoder();
    private final AckEncoder ackEncoder = new AckEncoder();
    /** The term of the frame being handled, which every answer carries. */
    private long term;
    private long lastHelloNanos;

    FollowerSession(QueueReplica[] queues, DropCounters drops, ControlFrames control) {
        this.queues = queues;
        this.drops = drops;
        this.control = control;
    }

    /** A HELLO went unanswered for a queue long enough to say it again. */
    boolean helloDue(long now) {
        return now - lastHelloNanos > ReplicationAgent.HELLO_RETRY_NANOS && awaitsDescriptor();
    }

    /** The leader's heartbeat: its last and quorum index per queue. */
    void onHeartbeat(PeerLink p, HeartbeatBody heartbeat, long term) {
        this.term = term;
        boolean resynchronise = false;
        for (int q = 0; q < Math.min(heartbeat.count(), queues.length); q++) {
            QueueReplica queue = queues[q];
            if (queue.state() == ReplicaState.DISK_FULL && queue.active() && queue.store.hasRoomToWrite()
                    && queue.writer.drained() && queue.writer.resume()) {
                // space was freed: go on from what this copy holds, through HELLO, as after any gap
                LOG.info(queue.spec.name() + ": room to write again; catching up");
                queue.writer.wake();
                queue.acceptedIndex = queue.lastIndex;
                queue.transition(ReplicaState.AWAITING_DESCRIPTOR, "");
                queue.resynchronising(QueueStatus.ResyncCause.DISK_ROOM_AGAIN, "room to write again after DISK_FULL");
                resynchronise = true;
            }
            queue.leaderLastIndex = heartbeat.lastIndex(q);
            queue.leaderQuorumIndex = Math.max(queue.leaderQuorumIndex, heartbeat.quorumIndex(q));
            long quorum = Math.min(heartbeat.quorumIndex(q), queue.lastIndex);
            if (quorum > queue.quorumIndex) {
                queue.quorumIndex = quorum;
                queue.store.publishQuorumIndex(quorum);
            }
            if (queue.state() == ReplicaState.CATCHING_UP && queue.lastIndex >= queue.leaderLastIndex) {
                queue.transition(ReplicaState.LIVE, null);
            }
        }
        if (resynchronise) {
            sendHello(p, term);
        }
    }

    /** A queue still waits for the leader's DESCRIPTOR (not one the leader refused for good). */
    private boolean awaitsDescriptor() {
        for (QueueReplica q : queues) {
            if (q.active() && q.state() == ReplicaState.AWAITING_DESCRIPTOR) {
                return true;
            }
        }
        return false;
    }

    /**
     * Says where every queue stands: what its writer has written and its term history ({@code -2} for one not open
     * yet, or settling after a role change). Excerpts handed to the writer and not yet written are resent by the
     * leader and passed over here as already accepted.
     */
    void sendHello(PeerLink p, long term) {
        this.term = term;
        lastHelloNanos = System.nanoTime();
        HelloEncoder out = helloEncoder.begin(control.session(FrameType.HELLO, term, p), queues.length);
        for (QueueReplica q : queues) {
            if (!q.active()) {
                out.queue(q.spec.name(), HelloBody.NOT_OPEN, 0);
                continue;
            }
            out.queue(q.spec.name(), q.lastIndex, q.history.entries().size());
            for (TermHistory.Entry e : q.history.entries()) {
                out.term(e.term(), e.previousLastIndex());
            }
        }
        control.sendSession(p);
    }

    void onDescriptor(PeerLink p, DescriptorBody descriptor, long term) {
        this.term = term;
        int position = descriptor.queue();
        if (position >= queues.length) {
            drops.increment(DropReason.UNEXPECTED);
            return;
        }
        QueueReplica q = queues[position];
        if (!q.active() || q.damage != null) {
            return; // not open yet (HELLO follows when it is), or damaged: never synchronised, never acknowledged
        }
        if (q.state() == ReplicaState.WAITING_FOR_WRITER) {
            // A HELLO is owed once the writer drained (pollWriters), frames having been passed over since: the answer
            // to that HELLO is the one applied, not this one (which answers an earlier HELLO).
            return;
        }
        if (!q.writer.drained()) {
            // Where the copies agree is judged against what is written; the writer still has excerpts in hand (or is
            // blocked in Chronicle): ask again once it has drained, and take no DATA meanwhile. A DISK_FULL copy
            // would not take the DESCRIPTOR anyway: it waits for room (onHeartbeat).
            if (q.state() != ReplicaState.DISK_FULL) {
                q.transition(ReplicaState.WAITING_FOR_WRITER, null);
            }
            return;
        }
        long resumeAfter = descriptor.resumeAfter();
        // The writer is idle: the store and the checksums are this thread's for the rest of this call.
        synchronized (q.writer) {
            applyDescriptor(p, q, descriptor, resumeAfter, position);
        }
    }

    private void applyDescriptor(PeerLink p, QueueReplica q, DescriptorBody descriptor, long resumeAfter, int position) {
        q.lastIndex = Math.max(q.lastIndex, q.writer.writtenIndex());
        if (q.writer.discarding()) {
            // A new session after a failed write: try again from what is written (a DISK_FULL copy waits for room).
            if (q.state() == ReplicaState.DISK_FULL || !q.writer.resume()) {
                return;
            }
            q.writer.wake();
        }
        q.acceptedIndex = q.lastIndex;
        try {
            if (q.lastIndex > resumeAfter) {
                // Our excerpts after the shared index were never the leader's: moved aside, never served, never deleted.
                q.checksums.close(); // its records go into the quarantine with the original files
                q.store = Quarantine.truncateAfter(q.store, q.spec.name(), resumeAfter);
                q.quarantines = Quarantine.onDisk(q.store.path());
                q.checksums = ExcerptChecksums.open(q.store.path());
                q.store.recordAckMode(QueueOpener.ackModeMark(q.spec.ackMode()));
                q.store.publishWritableTerm(-1);
                q.lastIndex = q.store.lastIndex();
                q.acceptedIndex = q.lastIndex;
                q.writer.replaceStore(q.store, q.checksums, q.lastIndex);
                if (q.lastIndex > resumeAfter) {
                    throw new ReplicationException("after quarantine the last index is still 0x" + Long.toHexString(q.lastIndex));
                }
            }
            byte[] bytes = descriptor.descriptor();
            if (bytes != null && !java.util.Arrays.equals(bytes, q.store.descriptorBytes())) {
                try {
                    q.store.installDescriptor(bytes);
                } catch (io.queueenterprise.queue.QueueConfigurationException e) {
                    if (e.problem() != io.queueenterprise.queue.QueueConfigurationException.Problem.IDENTITY_MISMATCH || q.lastIndex >= 0) {
                        throw e;
                    }
                    // An empty copy of another incarnation (e.g. a leader that never shipped its first excerpt
                    // here): its files are set aside like any divergence, then the leader's identity is taken.
                    q.checksums.close();
                    q.store = Quarantine.truncateAfter(q.store, q.spec.name(), -1);
                    q.quarantines = Quarantine.onDisk(q.store.path());
                    q.checksums = ExcerptChecksums.open(q.store.path());
                    q.store.recordAckMode(QueueOpener.ackModeMark(q.spec.ackMode()));
                    q.store.publishWritableTerm(-1);
                    q.writer.replaceStore(q.store, q.checksums, q.lastIndex);
                    q.store.installDescriptor(bytes);
                }
            }
            List<TermHistory.Entry> leaderHistory = new ArrayList<>();
            for (int i = 0; i < descriptor.termCount(); i++) {
                leaderHistory.add(new TermHistory.Entry(descriptor.term(i), descriptor.previousLastIndex(i)));
            }
            if (!leaderHistory.equals(q.history.entries())) {
                q.history.replace(leaderHistory); // fsynced before any excerpt of these terms is stored
            }
            q.transition(q.lastIndex >= q.leaderLastIndex && q.leaderLastIndex >= 0 ? ReplicaState.LIVE : ReplicaState.CATCHING_UP, "");
        } catch (RuntimeException e) {
            q.transition(ReplicaState.CORRUPTED, "cannot take the leader's copy: " + e.getMessage());
            LOG.error(q.spec.name() + ": " + q.detail(), e);
            control.refuse(p, term, p.sessionId, RefusalReason.CANNOT_STORE, position, q.lastIndex, q.detail());
            return;
        }
        sendAck(p, q);
    }

    /**
     * Hands a batch's new excerpts to the queue's writer.
     *
     * @return false to leave the frame unread in the subscription (the writer's ring has no room for it yet)
     */
    boolean onData(PeerLink p, DataBody data, int frameLength, long term, long now) {
        this.term = term;
        int position = data.queue();
        if (position < queues.length && (!queues[position].active() || queues[position].damage != null)) {
            return true; // streamed before the leader learnt nothing is taken here; not a protocol fault
        }
        if (position >= queues.length) {
            drops.increment(DropReason.UNEXPECTED);
            return true;
        }
        QueueReplica q = queues[position];
        if (!takesData(q)) {
            return true;
        }
        if (!q.writer.hasRoomFor(data.count(), frameLength)) {
            return writerBehind(q, now);
        }
        q.ringFullSinceNanos = 0;
        q.dropPart(); // a leader sends a batch only after the last piece of a large excerpt, or after starting over
        int handed = 0;
        while (data.next()) {
            long index = data.index();
            if (index <= q.acceptedIndex) {
                continue; // already held or in the writer's hands (a batch resent after a reconnect)
            }
            if (!follows(p, q, index) || !q.writer.write(index, data.buffer(), data.excerptOffset(), data.excerptLength())) {
                break;
            }
            q.acceptedIndex = index;
            handed++;
        }
        q.leaderQuorumIndex = Math.max(q.leaderQuorumIndex, data.quorumIndex());
        if (handed > 0) {
            q.writer.wake(); // acknowledged once written (pollWriters)
        } else {
            afterWritten(p, q); // nothing new: say what is held
        }
        return true;
    }

    /**
     * Whether the queue's state takes DATA and EXCERPT_PART: only a synchronised one does. A queue waiting for its
     * writer passes the frames over on purpose (it resynchronises through HELLO once the writer drained); in any other
     * state the frame was not expected (e.g. streamed before the leader learnt of a gap or a failure) and is counted.
     */
    private boolean takesData(QueueReplica q) {
        return switch (q.state()) {
            case CATCHING_UP, LIVE -> true;
            case WAITING_FOR_WRITER -> false;
            case STOPPED, LEADING, AWAITING_DESCRIPTOR, BEHIND_RETENTION, DISK_FULL, CORRUPTED -> {
                drops.increment(DropReason.UNEXPECTED);
                yield false;
            }
        };
    }

    /**
     * The writer's ring cannot take the next frame: leave it unread for up to {@link #WRITER_WAIT_NANOS}, then pass
     * this queue's frames over until the writer drained (so the queues behind it in the subscription go on).
     */
    private boolean writerBehind(QueueReplica q, long now) {
        if (q.ringFullSinceNanos == 0) {
            q.ringFullSinceNanos = now;
            return false;
        }
        if (now - q.ringFullSinceNanos < WRITER_WAIT_NANOS) {
            return false;
        }
        String detail = "its writer has been behind for " + (now - q.ringFullSinceNanos) / 1_000_000
                + " ms (blocked in the store?); other queues go on, this one resynchronises once its writer drained";
        LOG.warn(q.spec.name() + ": " + detail);
        q.resynchronising(QueueStatus.ResyncCause.WRITER_BEHIND, detail);
        q.ringFullSinceNanos = 0;
        q.transition(ReplicaState.WAITING_FOR_WRITER, null);
        q.dropPart();
        return true;
    }

    /**
     * What the writers did since the last cycle: acknowledges newly written excerpts, reports a failed write
     * (DISK_FULL or CORRUPTED, with a refusal to the leader), and says HELLO for queues whose writer drained after it
     * held them up. {@code p}: the leader's link when a session is established, else null (nothing is sent).
     */
    int pollWriters(PeerLink p, long term, long now) {
        this.term = term;
        int work = 0;
        boolean hello = false;
        for (QueueReplica q : queues) {
            if (!q.active()) {
                continue;
            }
            QueueWriter w = q.writer;
            reportBlocked(q, w.busyNanos(now));
            long written = w.writtenIndex();
            if (written > q.lastIndex) {
                q.lastIndex = written;
                q.bytesReplicated = w.bytesWritten();
                if (p != null) {
                    afterWritten(p, q);
                }
                work++;
            }
            long failures = w.failures();
            if (failures > q.failuresSeen) {
                q.failuresSeen = failures;
                String failure = w.failure();
                q.transition(w.failureIsDiskFull() ? ReplicaState.DISK_FULL : ReplicaState.CORRUPTED, failure);
                q.dropPart();
                LOG.error(q.spec.name() + ": " + failure);
                if (p != null) {
                    control.refuse(p, term, p.sessionId, RefusalReason.CANNOT_STORE, q.position, q.lastIndex, failure);
                }
                work++;
            }
            if (q.state() == ReplicaState.WAITING_FOR_WRITER && w.drained()) {
                q.transition(ReplicaState.AWAITING_DESCRIPTOR, null);
                q.lastIndex = Math.max(q.lastIndex, w.writtenIndex());
                q.acceptedIndex = q.lastIndex;
                hello = true;
            }
        }
        if (hello && p != null) {
            sendHello(p, term);
            work++;
        }
        return work;
    }

    /**
     * A piece of an excerpt too large for a batch: assembled in the queue's part buffer (bounded by the store's
     * maximum excerpt length) and written at its index only when whole, so a replica never holds part of an
     * excerpt. Pieces come in order on one session; a piece that does not continue the assembly (a lost session
     * mid-excerpt) drops it and resynchronises through HELLO, and the leader sends the excerpt again from its start.
     */
    /** @return false to leave the frame unread in the subscription (see {@link #onData}) */
    boolean onExcerptPart(PeerLink p, ExcerptPartBody part, long term, long now) {
        this.term = term;
        int position = part.queue();
        if (position < queues.length && (!queues[position].active() || queues[position].damage != null)) {
            return true;
        }
        if (position >= queues.length) {
            drops.increment(DropReason.UNEXPECTED);
            return true;
        }
        QueueReplica q = queues[position];
        if (!takesData(q)) {
            return true;
        }
        long index = part.index();
        if (index <= q.acceptedIndex) {
            if (part.isLast() && index <= q.lastIndex) {
                sendAck(p, q); // already held (resent after a reconnect): say so once
            }
            return true;
        }
        if (part.partOffset() == 0) {
            if (!q.writer.drained()) {
                return writerBehind(q, now); // the writer may still be writing the last assembled excerpt from partBytes
            }
            q.ringFullSinceNanos = 0;
            if (!follows(p, q, index)) {
                return true;
            }
            long max = q.store.maxExcerptLength();
            if (part.totalLength() > max) {
                q.transition(ReplicaState.CORRUPTED, "cannot store excerpt 0x" + Long.toHexString(index) + " of " + part.totalLength()
                        + " bytes: this replica stores excerpts of at most " + max + " bytes (a quarter of its block size)");
                LOG.error(q.spec.name() + ": " + q.detail());
                control.refuse(p, term, p.sessionId, RefusalReason.CANNOT_STORE, position, q.lastIndex, q.detail());
                return true;
            }
            q.startPart(index, part.totalLength());
        } else if (q.partIndex != index || q.partTotal != part.totalLength() || q.partReceived != part.partOffset()) {
            String detail = "piece at " + part.partOffset() + " of excerpt 0x" + Long.toHexString(index)
                    + " does not continue what was assembled (" + q.partReceived + " bytes of 0x"
                    + Long.toHexString(q.partIndex) + ")";
            LOG.warn(q.spec.name() + ": " + detail + "; resynchronising");
            q.resynchronising(QueueStatus.ResyncCause.BROKEN_PIECES, detail);
            q.dropPart();
            q.transition(ReplicaState.AWAITING_DESCRIPTOR, null);
            sendHello(p, term);
            return true;
        }
        if (part.isLast() && !q.writer.hasRoomFor(1, 0)) {
            return writerBehind(q, now); // nothing copied yet: the piece is read again
        }
        part.buffer().getBytes(part.bytesOffset(), q.partBytes, part.partOffset(), part.bytesLength());
        q.partReceived += part.bytesLength();
        if (!part.isLast()) {
            return true;
        }
        int total = q.partTotal;
        q.dropPart();
        q.writer.writeAssembled(index, q.partBytes, total); // room checked above; partBytes untouched until drained
        q.writer.wake();
        q.acceptedIndex = index;
        q.leaderQuorumIndex = Math.max(q.leaderQuorumIndex, part.quorumIndex());
        return true;
    }

    /** Whether {@code index} is the next excerpt here; if not, resynchronises through HELLO and says false. */
    private boolean follows(PeerLink p, QueueReplica q, long index) {
        if (ReplicaStore.isNext(q.store.rollCycle(), q.acceptedIndex, index)) {
            return true;
        }
        // Never store past a gap: resynchronise through HELLO, which says exactly where we stand.
        String detail = "excerpt 0x" + Long.toHexString(index) + " does not follow 0x" + Long.toHexString(q.acceptedIndex);
        LOG.warn(q.spec.name() + ": " + detail + "; resynchronising");
        q.resynchronising(QueueStatus.ResyncCause.GAP, detail);
        q.dropPart();
        q.transition(ReplicaState.AWAITING_DESCRIPTOR, null);
        sendHello(p, term);
        return false;
    }

    /** A writer blocked in the store for more than a second says so in the queue's detail (updated each second). */
    private static void reportBlocked(QueueReplica q, long blockedNanos) {
        q.trackWriterStall(blockedNanos);
        long seconds = blockedNanos / 1_000_000_000L;
        if (seconds == q.blockedSecondsReported) {
            return;
        }
        boolean wasReporting = q.blockedSecondsReported > 0;
        q.blockedSecondsReported = seconds;
        if (seconds > 0) {
            String detail = BLOCKED_DETAIL + seconds + " s (another process holding the queue's write lock, stalled or"
                    + " killed?); the other queues go on";
            if (q.state() == ReplicaState.LIVE) {
                q.transition(ReplicaState.CATCHING_UP, detail); // not keeping up: not ready either; LIVE again once written
            } else {
                q.describe(detail);
            }
        } else if (wasReporting && q.detail().startsWith(BLOCKED_DETAIL)) {
            q.describe("");
        }
    }

    private static final String BLOCKED_DETAIL = "its writer has been blocked in the store for ";

    /** After the writer wrote more: the leader's quorum index as far as held here, LIVE when caught up, ack. */
    private void afterWritten(PeerLink p, QueueReplica q) {
        long quorum = Math.min(q.leaderQuorumIndex, q.lastIndex);
        if (quorum > q.quorumIndex) {
            q.quorumIndex = quorum;
            q.store.publishQuorumIndex(quorum);
        }
        if (q.state() == ReplicaState.CATCHING_UP && q.lastIndex >= q.leaderLastIndex) {
            q.transition(ReplicaState.LIVE, null);
        }
        sendAck(p, q);
    }

    static boolean isDiskFull(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof io.queueenterprise.queue.StorageFullException) {
                return true; // refused before writing: nothing half written
            }
            String m = String.valueOf(t.getMessage());
            if (m.contains("No space left") || m.contains("ENOSPC") || m.contains("Disk quota")) {
                return true;
            }
        }
        return false;
    }

    private void sendAck(PeerLink p, QueueReplica q) {
        ackEncoder.encode(control.session(FrameType.ACK, term, p), q.position, q.reported(), q.lastIndex);
        control.sendSession(p);
    }
}
