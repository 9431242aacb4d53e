package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.StaleTermException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's role, term and leader, and what each role change does to every queue: promote, follow, fence (the
 * admin commands, persisted before acting), settle (a queue takes no part until its writer found its last index),
 * then lead, follow or stop each queue. Terms only ever come from outside (the admin endpoint); a queue that joins
 * late (opened off the duty thread) takes whatever role the node has then. Duty-cycle thread only.
 */
final class RoleController {
    private static final Logger LOG = LoggerFactory.getLogger(RoleController.class);
    /** A queue whose writer has been blocked this long in the store says so in its state detail. */
    static final long WRITER_BLOCKED_REPORT_NANOS = 1_000_000_000L;

    private final EngineSettings settings;
    private final int self;
    private final NodeStateFile stateFile;
    private final QueueReplica[] queues;
    private final PeerLink[] peers;
    private final LeaderSession leaderSession;
    private final FollowerSession follower;
    private final LeaderLease lease;
    /** What the LEADING queues' stores were last told ({@link io.queueenterprise.queue.ReplicaStore#publishLeaseUntil}). */
    private long publishedLeaseUntil = LeaderLease.NOT_HELD;
    /** When this node last started acknowledging without a break ({@link Long#MIN_VALUE}: it does not now). */
    private long acknowledgingSinceNanos = Long.MIN_VALUE;

    private long term;
    private NodeStatus.Role role = NodeStatus.Role.STANDBY;
    private int leader = -1;
    /** Some queue waits for its writer to find its last index after a role change. */
    private boolean settling;
    /** Some queue is not open yet (see {@link #adoptOpened}). */
    private boolean queuesPending = true;

    RoleController(EngineSettings settings, NodeStateFile stateFile, QueueReplica[] queues, PeerLink[] peers,
                   LeaderSession leaderSession, FollowerSession follower) {
        this.settings = settings;
        this.self = settings.selfPosition();
        this.stateFile = stateFile;
        this.queues = queues;
        this.peers = peers;
        this.leaderSession = leaderSession;
        this.follower = follower;
        this.lease = new LeaderLease(settings.peers().size(), self, settings.leaseTimeout().toNanos());
    }

    LeaderLease lease() {
        return lease;
    }

    /** See {@link io.queueenterprise.replication.NodeStatus.Lease#sinceMillisAgo}: {@link Long#MIN_VALUE} when not acknowledging. */
    long acknowledgingSinceNanos() {
        return role == NodeStatus.Role.LEADER ? acknowledgingSinceNanos : Long.MIN_VALUE;
    }

    /**
     * Until when this node may acknowledge (see {@link LeaderLease#acknowledgeUntil}); {@link LeaderLease#NOT_HELD}
     * when it does not lead. Duty-cycle thread.
     */
    long acknowledgeUntil(long now) {
        return role == NodeStatus.Role.LEADER ? lease.acknowledgeUntil(now) : LeaderLease.NOT_HELD;
    }

    /**
     * Whether this leader may acknowledge at {@code now}, from the deadline {@link #updateLease} published in this duty
     * cycle (called after it, with the same {@code now}: the lease is not worked out twice per cycle).
     */
    boolean acknowledgingAfterUpdate(long now) {
        return role == NodeStatus.Role.LEADER && now < publishedLeaseUntil;
    }

    /**
     * Leader, every duty cycle: advances the lease and tells the leading queues' library appenders when it changed
     * (a mapped long per queue; a follower's echo moves it about ten times a second).
     */
    int updateLease(long now) {
        long until = acknowledgeUntil(now);
        if (until == publishedLeaseUntil) {
            return 0;
        }
        boolean wasHeld = publishedLeaseUntil != LeaderLease.NOT_HELD;
        publishedLeaseUntil = until;
        acknowledgingSinceNanos = until == LeaderLease.NOT_HELD ? Long.MIN_VALUE : wasHeld ? acknowledgingSinceNanos : now;
        for (QueueReplica q : queues) {
            if (q.state() == ReplicaState.LEADING) {
                q.store.publishLeaseUntil(until);
            }
        }
        if (wasHeld != (until != LeaderLease.NOT_HELD)) {
            LOG.info(settings.nodeId() + ": " + (wasHeld ? "lease lapsed at term " + term
                    + ": no majority heard within " + lease.timeoutNanos() / 1_000_000 + " ms; acknowledging nothing"
                    : "lease held at term " + term + ": acknowledging"));
        }
        return 1;
    }

    long term() {
        return term;
    }

    NodeStatus.Role role() {
        return role;
    }

    /** The leader's position among the peers (this node's when leading), or -1 when it knows none. */
    int leader() {
        return leader;
    }

    /** The role and term the node had when it stopped, as persisted. */
    void restore(NodeStateFile.State persisted) {
        term = persisted.term();
        switch (persisted.role()) {
            case LEADER -> becomeLeader();
            case FOLLOWER -> becomeFollower(settings.peerPosition(persisted.leader()));
            case FENCED -> stopServing(NodeStatus.Role.FENCED);
            default -> stopServing(NodeStatus.Role.STANDBY);
        }
    }

    /** See {@link io.queueenterprise.replication.NodeControl#promote}. */
    void promote(long newTerm) {
        // A node the operator fenced at T (every answering replica is, before it chooses whom to promote at T) may
        // lead T: fencing leads nothing, and the operator promotes one node per term. Any other node needs a higher term.
        boolean fencedForThisTerm = newTerm == term && role == NodeStatus.Role.FENCED && leader < 0;
        if (newTerm < term || (newTerm == term && !fencedForThisTerm)) {
            throw new StaleTermException("promote", newTerm, term);
        }
        stateFile.write(new NodeStateFile.State(newTerm, NodeStatus.Role.LEADER, settings.nodeId()));
        term = newTerm;
        becomeLeader();
    }

    /** @return false when it already follows this leader at this term (nothing done) */
    boolean follow(String leaderId, long newTerm) {
        int position = settings.peerPosition(leaderId);
        if (position < 0 || position == self) {
            throw new IllegalArgumentException("UNKNOWN_PEER: '" + leaderId + "' is not another peer of this cluster "
                    + settings.peers().stream().map(EngineSettings.Peer::id).toList());
        }
        if (newTerm < term) {
            throw new StaleTermException("follow " + leaderId, newTerm, term);
        }
        if (newTerm == term) {
            if (role == NodeStatus.Role.FOLLOWER && leader == position) {
                return false;
            }
            if (role == NodeStatus.Role.LEADER || leader >= 0) {
                // Term T has one leader: this node leads it, or follows another leader in it.
                throw new StaleTermException("follow " + leaderId + " (term " + term + " has leader "
                        + settings.peers().get(leader).id() + ")", newTerm, term);
            }
        }
        stateFile.write(new NodeStateFile.State(newTerm, NodeStatus.Role.FOLLOWER, leaderId));
        term = newTerm;
        becomeFollower(position);
        return true;
    }

    void fence(long newTerm) {
        if (newTerm < term) {
            throw new StaleTermException("fence", newTerm, term);
        }
        stateFile.write(new NodeStateFile.State(newTerm, NodeStatus.Role.FENCED, null));
        term = newTerm;
        stopServing(NodeStatus.Role.FENCED);
    }

    /** Some queue is not open yet: the duty cycle looks for it in the opener's slots. */
    boolean queuesPending() {
        return queuesPending;
    }

    /** The queues the opener has made ready join: this node's role is applied to each as it arrives. */
    int adoptOpened(QueueOpener opener, long now) {
        int pending = 0;
        int adopted = 0;
        for (QueueReplica q : queues) {
            if (q.open()) {
                continue;
            }
            QueueOpener.Opened opened = opener.take(q.position);
            if (opened == null) {
                pending++;
                String problem = opener.problem(q.position);
                q.describe(problem == null ? "opening" : "cannot open yet (retried): " + problem);
                continue;
            }
            q.store = opened.store();
            q.history = opened.history();
            q.lastIndex = opened.lastIndex();
            q.checksums = opened.checksums();
            q.descriptorWatch = opened.descriptorWatch();
            q.damage = opened.damage();
            q.quarantines = opened.quarantines();
            q.describe(q.damage != null ? q.damage : opened.note() != null ? opened.note() : "");
            q.writer = new QueueWriter(settings.nodeId(), q.spec.name(), q.store, q.checksums, q.lastIndex);
            q.acceptedIndex = q.lastIndex;
            q.moveTo(QueueReplica.Phase.ACTIVE, "opened");
            adopted++;
            joined(q, now);
        }
        if (adopted > 0 && role == NodeStatus.Role.FOLLOWER && peers[leader].established()) {
            follower.sendHello(peers[leader], term); // the leader learns where the new queues stand
        }
        queuesPending = pending > 0;
        return adopted;
    }

    /** A queue the opener handed over takes the node's current role. */
    private void joined(QueueReplica q, long now) {
        switch (role) {
            case LEADER -> leadQueue(q, now, q.lastIndex);
            case FOLLOWER -> followQueue(q, q.lastIndex);
            default -> stopQueue(q, role);
        }
    }

    /** No queue is waiting for its last index after a role change. */
    boolean settled() {
        return !settling;
    }

    /** Every peer's session and per-queue progress forgotten (role change, transport restart). */
    void dropAllSessions() {
        for (PeerLink p : peers) {
            if (p != null) {
                p.dropSession();
                for (PeerLink.FollowerQueue f : p.progress) {
                    f.state = QueueStatus.State.STOPPED;
                    f.durableIndex = -1;
                }
            }
        }
    }

    private void becomeLeader() {
        dropAllSessions();
        lease.lead(term); // acknowledges nothing until a majority answers at this term (and, above term 1, waited)
        publishedLeaseUntil = LeaderLease.NOT_HELD;
        acknowledgingSinceNanos = Long.MIN_VALUE;
        role = NodeStatus.Role.LEADER;
        leader = self;
        for (QueueReplica q : queues) {
            if (q.open()) {
                settle(q); // led once its writer found its last index; a queue still opening is led when it joins
            }
        }
    }

    /**
     * A role change: the queue takes no part until its writer, after the writes it has in hand, found the queue's
     * last index (Chronicle's end scan can take seconds on a copy a killed writer left mid-excerpt, and writes queued
     * before it can wait on a stalled writer's lock); then {@link #settleQueues} applies the node's role to it.
     */
    private void settle(QueueReplica q) {
        closeTails(q);
        q.store.publishWritableTerm(-1); // no library appender writes until the new role is applied
        q.roleGeneration++;
        q.moveTo(q.writer.findLast(q.roleGeneration) ? QueueReplica.Phase.SETTLING : QueueReplica.Phase.SETTLE_NOT_ASKED,
                "role change");
        q.writer.wake();
        q.ringFullSinceNanos = 0;
        q.dropPart();
        if (q.damage == null) {
            q.transition(ReplicaState.STOPPED, "finding the last index for the new role");
        }
        settling = true;
    }

    /** Queues whose writer found their last index take the node's current role. */
    int settleQueues(long now) {
        if (!settling) {
            return 0;
        }
        int work = 0;
        boolean stillSettling = false;
        boolean joinedAsFollower = false;
        for (QueueReplica q : queues) {
            if (!q.settling()) {
                continue;
            }
            if (q.phase() == QueueReplica.Phase.SETTLE_NOT_ASKED) {
                if (q.writer.findLast(q.roleGeneration)) {
                    q.moveTo(QueueReplica.Phase.SETTLING, "writer asked for the last index");
                }
                q.writer.wake();
                stillSettling = true;
                continue;
            }
            Long last = q.writer.foundLastIndex(q.roleGeneration);
            if (last == null) {
                stillSettling = true;
                long blocked = q.writer.busyNanos(now);
                q.trackWriterStall(blocked);
                if (blocked > WRITER_BLOCKED_REPORT_NANOS && q.damage == null) {
                    q.describe("finding the last index for the new role: its writer has been blocked in the store for "
                            + blocked / 1_000_000 + " ms");
                }
                continue;
            }
            q.moveTo(QueueReplica.Phase.ACTIVE, "last index found");
            work++;
            if (last == QueueWriter.SCAN_FAILED) {
                q.transition(ReplicaState.CORRUPTED, String.valueOf(q.writer.failure()));
                LOG.error(q.spec.name() + ": " + q.detail());
                continue;
            }
            q.acceptedIndex = last;
            switch (role) {
                case LEADER -> leadQueue(q, now, last);
                case FOLLOWER -> {
                    followQueue(q, last);
                    joinedAsFollower = true;
                }
                default -> stopQueue(q, role);
            }
        }
        settling = stillSettling;
        if (joinedAsFollower && peers[leader].established()) {
            follower.sendHello(peers[leader], term); // the leader learns where the settled queues stand
        }
        return work;
    }

    /**
     * {@code last}: the queue's last index, read by the caller; a queue that just joined passes what the opener read,
     * since Chronicle's scan for the end can take seconds on a queue a killed writer left incomplete.
     */
    private void leadQueue(QueueReplica q, long now, long last) {
        closeTails(q);
        if (q.damage != null) {
            q.store.publishWritableTerm(-1); // a damaged copy is neither served nor written
            q.transition(ReplicaState.CORRUPTED, null);
            return;
        }
        q.lastIndex = last;
        q.history.append(term, last); // fsynced before the queue takes appends under this term
        q.store.recordLeader(q.spec.name(), term);
        q.selfTail = q.store.rawTailer();
        if (last >= 0 && !q.selfTail.moveAfter(last)) {
            q.selfTail.toStart();
        }
        q.forgetSeen();
        q.transition(ReplicaState.LEADING, "");
        leaderSession.updateQuorum(q, now);
        q.store.publishLeaseUntil(publishedLeaseUntil); // before the term: no appender sees the term with an old lease
        q.store.publishWritableTerm(term);
    }

    private void becomeFollower(int leaderPosition) {
        dropAllSessions();
        lease.stop();
        role = NodeStatus.Role.FOLLOWER;
        leader = leaderPosition;
        for (QueueReplica q : queues) {
            if (q.open()) {
                q.store.publishWritableTerm(-1); // at once: no library appender writes here from now on
                q.store.recordReplica();
                settle(q);
            }
        }
        peers[leaderPosition].challengeAtOnce(System.nanoTime());
    }

    /** {@code last}: as for {@link #leadQueue}. */
    private void followQueue(QueueReplica q, long last) {
        q.store.publishWritableTerm(-1); // before anything else: no library appender writes here from now on
        q.store.recordReplica();
        closeTails(q);
        q.lastIndex = last;
        q.leaderLastIndex = -1;
        if (q.damage != null) {
            q.transition(ReplicaState.CORRUPTED, null);
        } else if (q.state() != ReplicaState.BEHIND_RETENTION) { // refused while settling: stays refused
            q.transition(ReplicaState.AWAITING_DESCRIPTOR, null); // the HELLO follows (settleQueues, adoptOpened)
        }
    }

    private void stopServing(NodeStatus.Role newRole) {
        lease.stop();
        for (QueueReplica q : queues) {
            if (q.open()) {
                stopQueue(q, newRole);
            }
        }
        dropAllSessions();
        role = newRole;
        leader = -1;
    }

    private void stopQueue(QueueReplica q, NodeStatus.Role newRole) {
        q.moveTo(QueueReplica.Phase.ACTIVE, "stopped"); // a fenced or standby queue needs no last index
        q.store.publishWritableTerm(-1);
        if (newRole == NodeStatus.Role.FENCED) {
            q.store.recordReplica();
        }
        closeTails(q);
        q.transition(q.damage != null ? ReplicaState.CORRUPTED : ReplicaState.STOPPED, null);
    }

    /** The leader's own tail and every follower's tailer of this queue closed. */
    void closeTails(QueueReplica q) {
        if (q.selfTail != null) {
            q.selfTail.close();
            q.selfTail = null;
        }
        for (PeerLink p : peers) {
            if (p != null) {
                p.progress[q.position].reset();
            }
        }
    }
}
