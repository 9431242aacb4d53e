package io.queueenterprise.replication.engine;

import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.ReplicationException;
import io.queueenterprise.replication.wire.DataBody;
import io.queueenterprise.replication.wire.DescriptorBody;
import io.queueenterprise.replication.wire.ExcerptPartBody;
import io.queueenterprise.replication.wire.FrameEncoder;
import io.queueenterprise.replication.wire.FrameType;
import io.queueenterprise.replication.wire.HeartbeatBody;
import io.queueenterprise.replication.wire.HelloBody;
import io.queueenterprise.replication.wire.RefusalReason;

import java.util.ArrayList;
import java.util.List;

/**
 * A follower's side of the data path, for every hosted queue: says where it stands (HELLO), takes the leader's
 * DESCRIPTOR (quarantining what diverged), stores DATA batches and assembled EXCERPT_PARTs at their indexes with no
 * gap, acknowledges what it holds, and follows the leader's heartbeats (quorum index, LIVE, disk room again). Frames
 * reach it authenticated, in sequence and at this node's term; the session itself (handshake, timeouts) is the
 * agent's. Duty-cycle thread only.
 */
final class FollowerSession {
    private static final System.Logger LOG = System.getLogger(FollowerSession.class.getName());

    private final QueueReplica[] queues;
    private final DropCounters drops;
    private final ControlFrames control;
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
            if (queue.state == QueueStatus.State.DISK_FULL && queue.store.hasRoomToWrite()) {
                // space was freed: go on from what this copy holds, through HELLO, as after any gap
                LOG.log(System.Logger.Level.INFO, queue.spec.name() + ": room to write again; catching up");
                queue.state = QueueStatus.State.CATCHING_UP;
                queue.stateDetail = null;
                queue.synced = false;
                resynchronise = true;
            }
            queue.leaderLastIndex = heartbeat.lastIndex(q);
            long quorum = Math.min(heartbeat.quorumIndex(q), queue.lastIndex);
            if (quorum > queue.quorumIndex) {
                queue.quorumIndex = quorum;
                queue.store.publishQuorumIndex(quorum);
            }
            if (queue.synced && queue.state == QueueStatus.State.CATCHING_UP && queue.lastIndex >= queue.leaderLastIndex) {
                queue.state = QueueStatus.State.LIVE;
            }
        }
        if (resynchronise) {
            sendHello(p, term);
        }
    }

    /** A queue still waits for the leader's DESCRIPTOR (not one the leader refused for good). */
    private boolean awaitsDescriptor() {
        for (QueueReplica q : queues) {
            if (q.open && !q.synced && q.state != QueueStatus.State.BEHIND_RETENTION && q.state != QueueStatus.State.CORRUPTED
                    && q.state != QueueStatus.State.DISK_FULL) {
                return true;
            }
        }
        return false;
    }

    /** Says where every queue stands (last index and term history; {@code -2} for one not open yet). */
    void sendHello(PeerLink p, long term) {
        this.term = term;
        lastHelloNanos = System.nanoTime();
        FrameEncoder out = control.session(FrameType.HELLO, term, p).u16(queues.length);
        for (QueueReplica q : queues) {
            if (!q.open) {
                out.shortString(q.spec.name()).i64(HelloBody.NOT_OPEN).u16(0);
                continue;
            }
            out.shortString(q.spec.name()).i64(q.lastIndex).u16(q.history.entries().size());
            for (TermHistory.Entry e : q.history.entries()) {
                out.i64(e.term()).i64(e.previousLastIndex());
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
        if (!q.open || q.damage != null) {
            return; // not open yet (HELLO follows when it is), or damaged: never synchronised, never acknowledged
        }
        long resumeAfter = descriptor.resumeAfter();
        try {
            if (q.lastIndex > resumeAfter) {
                // Our excerpts after the shared index were never the leader's: moved aside, never served, never deleted.
                q.checksums.close(); // its records go into the quarantine with the original files
                q.store = Quarantine.truncateAfter(q.store, q.spec.name(), resumeAfter);
                q.checksums = ExcerptChecksums.open(q.store.path());
                q.store.recordAckMode(QueueOpener.ackModeMark(q.spec.ackMode()));
                q.store.publishWritableTerm(-1);
                q.lastIndex = q.store.lastIndex();
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
                    q.checksums = ExcerptChecksums.open(q.store.path());
                    q.store.recordAckMode(QueueOpener.ackModeMark(q.spec.ackMode()));
                    q.store.publishWritableTerm(-1);
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
            q.synced = true;
            q.state = q.lastIndex >= q.leaderLastIndex && q.leaderLastIndex >= 0 ? QueueStatus.State.LIVE : QueueStatus.State.CATCHING_UP;
            q.stateDetail = "";
        } catch (RuntimeException e) {
            q.state = QueueStatus.State.CORRUPTED;
            q.stateDetail = "cannot take the leader's copy: " + e.getMessage();
            LOG.log(System.Logger.Level.ERROR, q.spec.name() + ": " + q.stateDetail, e);
            control.refuse(p, term, p.sessionId, RefusalReason.CANNOT_STORE, position, q.lastIndex, q.stateDetail);
            return;
        }
        sendAck(p, q);
    }

    void onData(PeerLink p, DataBody data, long term) {
        this.term = term;
        int position = data.queue();
        if (position < queues.length && (!queues[position].open || queues[position].damage != null)) {
            return; // streamed before the leader learnt nothing is taken here; not a protocol fault
        }
        if (position >= queues.length || !queues[position].synced) {
            drops.increment(DropReason.UNEXPECTED);
            return;
        }
        QueueReplica q = queues[position];
        if (q.state == QueueStatus.State.CORRUPTED || q.state == QueueStatus.State.DISK_FULL) {
            return;
        }
        q.dropPart(); // a leader sends a batch only after the last piece of a large excerpt, or after starting over
        byte[] array = data.buffer().byteArray();
        while (data.next()) {
            long index = data.index();
            if (index <= q.lastIndex) {
                continue; // already held (a batch resent after a reconnect)
            }
            if (!follows(p, q, index) || !store(p, q, index, array, data.excerptOffset(), data.excerptLength())) {
                break;
            }
        }
        afterStored(p, q, data.quorumIndex());
    }

    /**
     * A piece of an excerpt too large for a batch: assembled in the queue's part buffer (bounded by the store's
     * maximum excerpt length) and written at its index only when whole, so a replica never holds part of an
     * excerpt. Pieces come in order on one session; a piece that does not continue the assembly (a lost session
     * mid-excerpt) drops it and resynchronises through HELLO, and the leader sends the excerpt again from its start.
     */
    void onExcerptPart(PeerLink p, ExcerptPartBody part, long term) {
        this.term = term;
        int position = part.queue();
        if (position < queues.length && (!queues[position].open || queues[position].damage != null)) {
            return;
        }
        if (position >= queues.length || !queues[position].synced) {
            drops.increment(DropReason.UNEXPECTED);
            return;
        }
        QueueReplica q = queues[position];
        if (q.state == QueueStatus.State.CORRUPTED || q.state == QueueStatus.State.DISK_FULL) {
            return;
        }
        long index = part.index();
        if (index <= q.lastIndex) {
            if (part.isLast()) {
                sendAck(p, q); // already held (resent after a reconnect): say so once
            }
            return;
        }
        if (part.partOffset() == 0) {
            if (!follows(p, q, index)) {
                return;
            }
            long max = q.store.maxExcerptLength();
            if (part.totalLength() > max) {
                q.state = QueueStatus.State.CORRUPTED;
                q.stateDetail = "cannot store excerpt 0x" + Long.toHexString(index) + " of " + part.totalLength()
                        + " bytes: this replica stores excerpts of at most " + max + " bytes (a quarter of its block size)";
                LOG.log(System.Logger.Level.ERROR, q.spec.name() + ": " + q.stateDetail);
                control.refuse(p, term, p.sessionId, RefusalReason.CANNOT_STORE, position, q.lastIndex, q.stateDetail);
                return;
            }
            q.startPart(index, part.totalLength());
        } else if (q.partIndex != index || q.partTotal != part.totalLength() || q.partReceived != part.partOffset()) {
            LOG.log(System.Logger.Level.WARNING, q.spec.name() + ": piece at " + part.partOffset() + " of excerpt 0x"
                    + Long.toHexString(index) + " does not continue what was assembled (" + q.partReceived
                    + " bytes of 0x" + Long.toHexString(q.partIndex) + "); resynchronising");
            q.dropPart();
            q.synced = false;
            q.state = QueueStatus.State.CATCHING_UP;
            sendHello(p, term);
            return;
        }
        part.buffer().getBytes(part.bytesOffset(), q.partBytes, part.partOffset(), part.bytesLength());
        q.partReceived += part.bytesLength();
        if (!part.isLast()) {
            return;
        }
        int total = q.partTotal;
        q.dropPart();
        store(p, q, index, q.partBytes, 0, total);
        afterStored(p, q, part.quorumIndex());
    }

    /** Whether {@code index} is the next excerpt here; if not, resynchronises through HELLO and says false. */
    private boolean follows(PeerLink p, QueueReplica q, long index) {
        if (ReplicaStore.isNext(q.store.rollCycle(), q.lastIndex, index)) {
            return true;
        }
        // Never store past a gap: resynchronise through HELLO, which says exactly where we stand.
        LOG.log(System.Logger.Level.WARNING, q.spec.name() + ": excerpt 0x" + Long.toHexString(index)
                + " does not follow 0x" + Long.toHexString(q.lastIndex) + "; resynchronising");
        q.dropPart();
        q.synced = false;
        q.state = QueueStatus.State.CATCHING_UP;
        sendHello(p, term);
        return false;
    }

    /** Writes the next excerpt at {@code index}; on failure sets DISK_FULL or CORRUPTED, refuses, and says false. */
    private boolean store(PeerLink p, QueueReplica q, long index, byte[] array, int offset, int length) {
        try {
            q.store.writeAt(index, array, offset, length);
        } catch (RuntimeException | Error e) {
            boolean full = isDiskFull(e);
            q.state = full ? QueueStatus.State.DISK_FULL : QueueStatus.State.CORRUPTED;
            q.stateDetail = "cannot store excerpt 0x" + Long.toHexString(index) + ": " + e;
            LOG.log(System.Logger.Level.ERROR, q.spec.name() + ": " + q.stateDetail);
            control.refuse(p, term, p.sessionId, RefusalReason.CANNOT_STORE, q.position, q.lastIndex, q.stateDetail);
            return false;
        }
        q.checksums.record(index, array, offset, length);
        q.lastIndex = index;
        q.bytesReplicated += length;
        return true;
    }

    /** After a frame's excerpts were stored: the leader's quorum index as far as held here, LIVE when caught up, ack. */
    private void afterStored(PeerLink p, QueueReplica q, long leaderQuorumIndex) {
        long quorum = Math.min(leaderQuorumIndex, q.lastIndex);
        if (quorum > q.quorumIndex) {
            q.quorumIndex = quorum;
            q.store.publishQuorumIndex(quorum);
        }
        if (q.state == QueueStatus.State.CATCHING_UP && q.synced && q.lastIndex >= q.leaderLastIndex) {
            q.state = QueueStatus.State.LIVE;
        }
        sendAck(p, q);
    }

    private static boolean isDiskFull(Throwable e) {
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
        control.session(FrameType.ACK, term, p)
                .u16(q.position).u8(q.state.ordinal()).i64(q.lastIndex);
        control.sendSession(p);
    }
}
