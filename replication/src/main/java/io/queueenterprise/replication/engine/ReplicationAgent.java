package io.queueenterprise.replication.engine;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.Header;
import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.ReplicationException;
import io.queueenterprise.replication.StaleTermException;
import io.queueenterprise.replication.config.NodeConfig;
import io.queueenterprise.replication.session.PeerCredential;
import io.queueenterprise.replication.session.SessionCrypto;
import io.queueenterprise.replication.wire.AckBody;
import io.queueenterprise.replication.wire.DataBody;
import io.queueenterprise.replication.wire.DescriptorBody;
import io.queueenterprise.replication.wire.ExcerptPartBody;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameEncoder;
import io.queueenterprise.replication.wire.FrameType;
import io.queueenterprise.replication.wire.HandshakeBody;
import io.queueenterprise.replication.wire.HeartbeatBody;
import io.queueenterprise.replication.wire.HelloBody;
import io.queueenterprise.replication.wire.MalformedFrameException;
import io.queueenterprise.replication.wire.RefusalBody;
import io.queueenterprise.replication.wire.RefusalReason;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The node's one duty cycle: drives the embedded media driver (INVOKER mode) and the Aeron client conductor, takes
 * frames, ships excerpts (leader) or stores them (follower), acks, heartbeats, and runs the admin commands handed
 * over by other threads. Everything it owns is touched by this thread only.
 *
 * <p>Who may speak: every frame is MACed; handshake frames under a key derived from the peer credential, all later
 * frames under a per-session key derived from both sides' nonces. A frame is checked in this order, and dropped
 * and counted at the first failure: decodable header, known peer, MAC (handshake or session key), session id,
 * increasing sequence, term equal to this node's (lower: refused as stale; higher: refused, since only the admin
 * endpoint moves terms), then a decodable body. DATA batches are MACed too: one HMAC per batch of up to 64 KiB
 * costs about a microsecond plus ~1 ns/byte here, and without it anyone who can send UDP to the port could make a
 * follower store arbitrary bytes at an index (a plain queue cannot detect that at all, an encrypted one only when a
 * reader fails); the batch amortises the cost over its excerpts.
 */
public final class ReplicationAgent implements Agent {
    private static final System.Logger LOG = System.getLogger(ReplicationAgent.class.getName());
    public static final int STREAM_ID = 0x5145; // "QE"
    static final int MAX_BATCH_BYTES = 64 * 1024;
    static final long HEARTBEAT_NANOS = 100_000_000L;
    static final long SESSION_TIMEOUT_NANOS = 3_000_000_000L;
    static final long CHALLENGE_RETRY_NANOS = 250_000_000L;
    static final long HELLO_RETRY_NANOS = 1_000_000_000L;
    /** Excerpts a leader's own tail takes per duty cycle and queue, so one busy queue cannot starve the rest. */
    static final int SELF_TAIL_PER_CYCLE = 4096;

    private final NodeConfig config;
    private final int self;
    private final PeerCredential credential;
    private final SessionCrypto.FrameMac handshakeMac;
    private final SecureRandom random = new SecureRandom();
    private final NodeStateFile stateFile;
    private final DropCounters drops = new DropCounters();
    private final ManyToOneConcurrentArrayQueue<Command> commands = new ManyToOneConcurrentArrayQueue<>(64);
    private final Path aeronDirectory;

    private final QueueOpener opener;
    /** Some queue is not open yet: the duty cycle looks for it in the opener's slots. */
    private boolean queuesPending = true;
    private MediaDriver driver;
    private Aeron aeron;
    private AgentInvoker driverInvoker;
    private AgentInvoker clientInvoker;
    private Subscription subscription;
    private FragmentAssembler assembler;
    private PeerLink[] peers;
    private QueueReplica[] queues;

    private long term;
    private NodeStatus.Role role = NodeStatus.Role.STANDBY;
    private int leader = -1;

    private final ExpandableArrayBuffer rx = new ExpandableArrayBuffer(64 * 1024);
    private final ExpandableArrayBuffer tx = new ExpandableArrayBuffer(64 * 1024);
    private final Frame frame = new Frame();
    private final FrameEncoder encoder = new FrameEncoder();
    private final HandshakeBody handshake = new HandshakeBody();
    private final HelloBody hello = new HelloBody();
    private final DescriptorBody descriptor = new DescriptorBody();
    private final DataBody data = new DataBody();
    private final ExcerptPartBody part = new ExcerptPartBody();
    private final AckBody ack = new AckBody();
    private final HeartbeatBody heartbeat = new HeartbeatBody();
    private final RefusalBody refusal = new RefusalBody();
    private final byte[] proofScratch = new byte[HandshakeBody.PROOF_LENGTH];
    private final byte[] nonceScratch = new byte[HandshakeBody.NONCE_LENGTH];
    private final long[] votes;
    private long lastDescriptorCheckNanos;
    private long lastHelloNanos;
    private RefusalReason lastRefusalLogged;
    private long lastRefusalLoggedNanos;
    private volatile NodeStatus lastStatus;
    private volatile boolean closed;

    public ReplicationAgent(NodeConfig config, PeerCredential credential, Path aeronDirectory) {
        this.config = config;
        this.credential = credential;
        this.handshakeMac = SessionCrypto.handshakeMac(credential);
        this.aeronDirectory = aeronDirectory;
        int me = -1;
        for (int i = 0; i < config.peers().size(); i++) {
            if (config.peers().get(i).id().equals(config.nodeId())) {
                me = i;
            }
        }
        if (me < 0) {
            throw new ReplicationException("nodeId " + config.nodeId() + " is not among the peers " + config.peers());
        }
        this.self = me;
        checkLimits(config);
        this.stateFile = new NodeStateFile(config.dataDirectory());
        this.votes = new long[config.peers().size()];
        this.opener = new QueueOpener(config.nodeId(), config.queues(), config.dataDirectory());
    }

    /**
     * Every queue was tried once: opened (and taken by the duty cycle once it runs its next cycle) or failed, then
     * retried in the background while the others replicate. Any thread.
     */
    public boolean queuesTriedOnce() {
        return opener.firstPassDone();
    }

    /** What the wire format can carry: refused at start with the field named, rather than failing mid-protocol. */
    private static void checkLimits(NodeConfig config) {
        if (config.peers().size() > Frame.MAX_PEERS) {
            throw new ReplicationException("peers: " + config.peers().size() + " peers; the protocol carries at most " + Frame.MAX_PEERS);
        }
        if (config.peers().stream().map(NodeConfig.Peer::id).distinct().count() != config.peers().size()) {
            throw new ReplicationException("peers: peer ids must be unique: " + config.peers().stream().map(NodeConfig.Peer::id).toList());
        }
        if (config.queues().isEmpty() || config.queues().size() > HelloBody.MAX_QUEUES) {
            throw new ReplicationException("queues: " + config.queues().size() + " queues; 1.." + HelloBody.MAX_QUEUES + " are supported");
        }
        for (NodeConfig.QueueSpec q : config.queues()) {
            int length = q.name().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
            if (length == 0 || length > 255) {
                throw new ReplicationException("queues.name: '" + q.name() + "' must be 1..255 bytes of UTF-8");
            }
        }
    }

    @Override
    public String roleName() {
        return "qe-replication-" + config.nodeId();
    }

    public DropCounters drops() {
        return drops;
    }

    // ------------------------------------------------------------------------------------------------ lifecycle

    @Override
    public void onStart() {
        CpuPinning.pinCurrentThread(config.nodeId());
        // Queues open on a thread of their own (QueueOpener): Chronicle can block for seconds opening one, and this
        // thread must keep invoking the media driver meanwhile. Each queue joins the duty cycle when it is ready.
        queues = new QueueReplica[config.queues().size()];
        for (int q = 0; q < queues.length; q++) {
            queues[q] = new QueueReplica(config.queues().get(q), q);
        }
        opener.start();
        MediaDriver.Context driverContext = new MediaDriver.Context()
                .aeronDirectoryName(aeronDirectory.toString())
                .threadingMode(ThreadingMode.INVOKER)
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true)
                .termBufferSparseFile(true)
                .publicationTermBufferLength(8 * 1024 * 1024)
                .ipcTermBufferLength(1024 * 1024)
                .warnIfDirectoryExists(false);
        driver = MediaDriver.launch(driverContext);
        driverInvoker = driver.sharedAgentInvoker();
        aeron = Aeron.connect(new Aeron.Context()
                .aeronDirectoryName(aeronDirectory.toString())
                .useConductorAgentInvoker(true)
                .driverAgentInvoker(driverInvoker));
        clientInvoker = aeron.conductorAgentInvoker();

        NodeConfig.Peer me = config.peers().get(self);
        subscription = aeron.addSubscription(channel(me), STREAM_ID);
        assembler = new FragmentAssembler(this::onFragment);
        peers = new PeerLink[config.peers().size()];
        for (int i = 0; i < peers.length; i++) {
            if (i != self) {
                ExclusivePublication publication = aeron.addExclusivePublication(channel(config.peers().get(i)), STREAM_ID);
                peers[i] = new PeerLink(i, config.peers().get(i).id(), publication, config.queues().size());
            }
        }
        NodeStateFile.State persisted = stateFile.read();
        term = persisted.term();
        switch (persisted.role()) {
            case LEADER -> becomeLeader();
            case FOLLOWER -> becomeFollower(peerPosition(persisted.leader()));
            case FENCED -> stopServing(NodeStatus.Role.FENCED);
            default -> stopServing(NodeStatus.Role.STANDBY);
        }
        lastStatus = buildStatus();
    }

    private static String channel(NodeConfig.Peer peer) {
        return "aeron:udp?endpoint=" + peer.host() + ":" + peer.replicationPort();
    }

    /** The queues the opener has made ready join: this node's role is applied to each as it arrives. */
    private int adoptOpenedQueues(long now) {
        int pending = 0;
        int adopted = 0;
        for (QueueReplica q : queues) {
            if (q.open) {
                continue;
            }
            QueueOpener.Opened opened = opener.take(q.position);
            if (opened == null) {
                pending++;
                String problem = opener.problem(q.position);
                q.stateDetail = problem == null ? "opening" : "cannot open yet (retried): " + problem;
                continue;
            }
            q.store = opened.store();
            q.history = opened.history();
            q.lastIndex = opened.lastIndex();
            q.checksums = opened.checksums();
            q.descriptorWatch = opened.descriptorWatch();
            q.damage = opened.damage();
            q.stateDetail = q.damage == null ? "" : q.damage;
            q.open = true;
            adopted++;
            switch (role) {
                case LEADER -> leadQueue(q, now);
                case FOLLOWER -> followQueue(q);
                default -> stopQueue(q, role);
            }
        }
        if (adopted > 0 && role == NodeStatus.Role.FOLLOWER && peers[leader].established) {
            sendHello(peers[leader]); // the leader learns where the new queues stand
        }
        queuesPending = pending > 0;
        return adopted;
    }

    @Override
    public void onClose() {
        lastStatus = buildStatus();
        closed = true;
        Command c;
        while ((c = commands.poll()) != null) {
            c.result.completeExceptionally(new ReplicationException("node " + config.nodeId() + " is closed"));
        }
        opener.close(); // queues opened but not taken are closed there
        if (queues != null) {
            for (QueueReplica q : queues) {
                if (q != null && q.open) {
                    closeTails(q);
                    if (q.checksums != null) {
                        q.checksums.close();
                    }
                    if (role == NodeStatus.Role.LEADER) {
                        // A leader that stops no longer takes appends: nothing is written that no one ships.
                        q.store.publishWritableTerm(-1);
                    }
                    q.store.close();
                }
            }
        }
        if (peers != null) {
            for (PeerLink p : peers) {
                if (p != null) {
                    p.dropSession();
                }
            }
        }
        if (aeron != null) {
            aeron.close();
        }
        if (driver != null) {
            driver.close();
        }
    }

    private void closeTails(QueueReplica q) {
        if (q.selfTail != null) {
            q.selfTail.close();
            q.selfTail = null;
        }
        if (peers != null) {
            for (PeerLink p : peers) {
                if (p != null) {
                    p.progress[q.position].reset();
                }
            }
        }
    }

    @Override
    public int doWork() {
        int work = driverInvoker.invoke();
        work += clientInvoker.invoke();
        if (queuesPending) {
            work += adoptOpenedQueues(System.nanoTime()); // before commands: a command sees every queue opened so far
        }
        work += runCommands();
        work += subscription.poll(assembler, 64);
        long now = System.nanoTime();
        if (role == NodeStatus.Role.LEADER) {
            work += leaderWork(now);
        } else if (role == NodeStatus.Role.FOLLOWER) {
            work += followerWork(now);
        }
        work += heartbeats(now);
        return work;
    }

    // ------------------------------------------------------------------------------------------------ commands

    /** An admin request, run on the duty-cycle thread. */
    private record Command(Function<ReplicationAgent, Object> action, CompletableFuture<Object> result) {
    }

    /** Runs {@code action} on the duty-cycle thread and returns its result (exceptions are rethrown here). */
    public <T> CompletableFuture<T> submit(Function<ReplicationAgent, T> action) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        if (closed || !commands.offer(new Command(a -> action.apply(a), result))) {
            result.completeExceptionally(new ReplicationException(closed ? "node " + config.nodeId() + " is closed"
                    : "node " + config.nodeId() + " is busy: too many admin requests in flight"));
        }
        @SuppressWarnings("unchecked")
        CompletableFuture<T> typed = (CompletableFuture<T>) (CompletableFuture<?>) result;
        return typed;
    }

    private int runCommands() {
        int n = 0;
        Command c;
        while ((c = commands.poll()) != null) {
            n++;
            try {
                c.result.complete(c.action.apply(this));
            } catch (RuntimeException e) {
                c.result.completeExceptionally(e);
            }
        }
        return n;
    }

    /** Promote: see {@link io.queueenterprise.replication.NodeControl#promote}. Duty-cycle thread. */
    public NodeStatus promote(long newTerm) {
        if (newTerm <= term) {
            throw new StaleTermException("promote", newTerm, term);
        }
        stateFile.write(new NodeStateFile.State(newTerm, NodeStatus.Role.LEADER, config.nodeId()));
        term = newTerm;
        becomeLeader();
        return buildStatus();
    }

    public NodeStatus follow(String leaderId, long newTerm) {
        int position = peerPosition(leaderId);
        if (position < 0 || position == self) {
            throw new IllegalArgumentException("UNKNOWN_PEER: '" + leaderId + "' is not another peer of this cluster "
                    + config.peers().stream().map(NodeConfig.Peer::id).toList());
        }
        if (newTerm < term) {
            throw new StaleTermException("follow " + leaderId, newTerm, term);
        }
        if (newTerm == term) {
            if (role == NodeStatus.Role.FOLLOWER && leader == position) {
                return buildStatus(); // already following this leader at this term
            }
            if (role == NodeStatus.Role.LEADER || leader >= 0) {
                // Term T has one leader: this node leads it, or follows another leader in it.
                throw new StaleTermException("follow " + leaderId + " (term " + term + " has leader "
                        + config.peers().get(leader).id() + ")", newTerm, term);
            }
        }
        stateFile.write(new NodeStateFile.State(newTerm, NodeStatus.Role.FOLLOWER, leaderId));
        term = newTerm;
        becomeFollower(position);
        return buildStatus();
    }

    public NodeStatus fence(long newTerm) {
        if (newTerm < term) {
            throw new StaleTermException("fence", newTerm, term);
        }
        stateFile.write(new NodeStateFile.State(newTerm, NodeStatus.Role.FENCED, null));
        term = newTerm;
        stopServing(NodeStatus.Role.FENCED);
        return buildStatus();
    }

    private int peerPosition(String id) {
        for (int i = 0; i < config.peers().size(); i++) {
            if (config.peers().get(i).id().equals(id)) {
                return i;
            }
        }
        return -1;
    }

    private void dropAllSessions() {
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
        role = NodeStatus.Role.LEADER;
        leader = self;
        long now = System.nanoTime();
        for (QueueReplica q : queues) {
            if (q.open) {
                leadQueue(q, now); // a queue still opening is led when it joins
            }
        }
    }

    private void leadQueue(QueueReplica q, long now) {
        closeTails(q);
        if (q.damage != null) {
            q.store.publishWritableTerm(-1); // a damaged copy is neither served nor written
            q.state = QueueStatus.State.CORRUPTED;
            return;
        }
        long last = q.store.lastIndex();
        q.lastIndex = last;
        q.history.append(term, last); // fsynced before the queue takes appends under this term
        q.store.recordLeader(q.spec.name(), term);
        q.selfTail = q.store.rawTailer();
        if (last >= 0 && !q.selfTail.moveAfter(last)) {
            q.selfTail.toStart();
        }
        q.forgetSeen();
        q.state = QueueStatus.State.LIVE;
        q.stateDetail = "";
        q.synced = false;
        updateQuorum(q, now);
        q.store.publishWritableTerm(term);
    }

    private void becomeFollower(int leaderPosition) {
        dropAllSessions();
        role = NodeStatus.Role.FOLLOWER;
        leader = leaderPosition;
        for (QueueReplica q : queues) {
            if (q.open) {
                followQueue(q);
            }
        }
        peers[leaderPosition].challengeSentNanos = System.nanoTime() - CHALLENGE_RETRY_NANOS;
    }

    private void followQueue(QueueReplica q) {
        q.store.publishWritableTerm(-1); // before anything else: no library appender writes here from now on
        q.store.recordReplica();
        closeTails(q);
        q.lastIndex = q.store.lastIndex();
        q.synced = false;
        q.leaderLastIndex = -1;
        if (q.damage != null) {
            q.state = QueueStatus.State.CORRUPTED;
        } else if (q.state != QueueStatus.State.BEHIND_RETENTION) {
            q.state = QueueStatus.State.CATCHING_UP;
        }
    }

    private void stopServing(NodeStatus.Role newRole) {
        for (QueueReplica q : queues) {
            if (q.open) {
                stopQueue(q, newRole);
            }
        }
        dropAllSessions();
        role = newRole;
        leader = -1;
    }

    private void stopQueue(QueueReplica q, NodeStatus.Role newRole) {
        q.store.publishWritableTerm(-1);
        if (newRole == NodeStatus.Role.FENCED) {
            q.store.recordReplica();
        }
        closeTails(q);
        q.state = q.damage != null ? QueueStatus.State.CORRUPTED : QueueStatus.State.STOPPED;
        q.synced = false;
    }

    // ------------------------------------------------------------------------------------------------ status

    /** Called on the duty-cycle thread; from others use {@link #status()}. */
    public NodeStatus buildStatus() {
        long now = System.nanoTime();
        List<QueueStatus> list = new ArrayList<>();
        for (QueueReplica q : queues) {
            List<QueueStatus.PeerProgress> progress = new ArrayList<>();
            if (!q.open) { // still opening: nothing held is known yet
                list.add(new QueueStatus(q.spec.name(), QueueStatus.State.STOPPED, -1, -1, -1, -1, progress, 0, drops.total()));
                continue;
            }
            if (role == NodeStatus.Role.LEADER) {
                for (PeerLink p : peers) {
                    if (p != null) {
                        PeerLink.FollowerQueue f = p.progress[q.position];
                        long lag = q.lastIndex < 0 ? 0 : Math.max(0, excerptsBetween(q, f.durableIndex, q.lastIndex));
                        progress.add(new QueueStatus.PeerProgress(p.id, p.established, f.durableIndex, lag,
                                q.lagNanos(f.durableIndex, now), f.state));
                    }
                }
            }
            long durable = q.lastIndex;
            list.add(new QueueStatus(q.spec.name(), q.state, q.lastIndex, durable, q.quorumIndex, q.store.firstIndex(),
                    progress, q.bytesReplicated, drops.total()));
        }
        NodeStatus status = new NodeStatus(config.nodeId(), role, term, leader < 0 ? null : config.peers().get(leader).id(), list);
        lastStatus = status;
        return status;
    }

    /** Excerpts after {@code from} up to {@code to}, counted within cycles (an estimate across a cycle change). */
    private static long excerptsBetween(QueueReplica q, long from, long to) {
        if (to <= from) {
            return 0;
        }
        if (from < 0) {
            return q.store.rollCycle().toSequenceNumber(to) + 1;
        }
        var rc = q.store.rollCycle();
        if (rc.toCycle(from) == rc.toCycle(to)) {
            return rc.toSequenceNumber(to) - rc.toSequenceNumber(from);
        }
        return rc.toSequenceNumber(to) + 1;
    }

    /** The status as of the last duty cycle that built one (after close: the final one). */
    public NodeStatus lastStatus() {
        return lastStatus;
    }

    public org.HdrHistogram.Histogram ackLatencySinceLastCall(String queue) {
        for (QueueReplica q : queues == null ? new QueueReplica[0] : queues) {
            if (q.spec.name().equals(queue)) {
                return q.ackLatency.getIntervalHistogram();
            }
        }
        throw new IllegalArgumentException("queue '" + queue + "' is not hosted by node " + config.nodeId());
    }

    /** Why a queue is in its state (e.g. which excerpt is damaged); empty when there is nothing to say. */
    public String stateDetail(String queue) {
        for (QueueReplica q : queues) {
            if (q.spec.name().equals(queue)) {
                return q.stateDetail == null ? "" : q.stateDetail;
            }
        }
        throw new IllegalArgumentException("queue '" + queue + "' is not hosted by node " + config.nodeId());
    }

    /** Follower: bytes of a large excerpt received in pieces and not yet stored (0: none). Duty-cycle thread. */
    public long bytesAssembling(String queue) {
        for (QueueReplica q : queues) {
            if (q.spec.name().equals(queue)) {
                return q.partReceived;
            }
        }
        throw new IllegalArgumentException("queue '" + queue + "' is not hosted by node " + config.nodeId());
    }

    // ------------------------------------------------------------------------------------------------ leader

    private int leaderWork(long now) {
        int work = 0;
        boolean checkDescriptors = now - lastDescriptorCheckNanos >= HEARTBEAT_NANOS;
        if (checkDescriptors) {
            lastDescriptorCheckNanos = now;
        }
        long nowMillis = checkDescriptors ? System.currentTimeMillis() : 0;
        for (QueueReplica q : queues) {
            if (!q.open) {
                continue;
            }
            work += tailSelf(q, now);
            if (checkDescriptors && q.descriptorWatch.mayHaveChanged(nowMillis)) {
                resendChangedDescriptor(q); // reads the file: only when its stamp says it may have changed
            }
            for (PeerLink p : peers) {
                if (p != null && p.established) {
                    work += ship(p, q);
                }
            }
            updateQuorum(q, now);
        }
        for (PeerLink p : peers) {
            if (p != null && p.established && quorumNewsFor(p)) {
                sendHeartbeat(p, now); // followers bound replicated reads by it: tell them now, not at the next beat
                work++;
            }
        }
        return work;
    }

    /** The quorum index of a queue moved past what this follower was last told, and no DATA frame is waiting to say it. */
    private boolean quorumNewsFor(PeerLink p) {
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
        if (current == null || java.util.Arrays.equals(current, q.sentDescriptor)) {
            return;
        }
        q.sentDescriptor = current;
        for (PeerLink p : peers) {
            PeerLink.FollowerQueue f = p == null ? null : p.progress[q.position];
            if (p != null && p.established && f.streaming) {
                // "resume after" at or past everything this follower was sent: a mid-stream descriptor truncates
                // nothing (the leader's own tail may be behind the follower's tailer within a cycle)
                sendDescriptor(p, q, Math.max(q.lastIndex, f.sentIndex), q.store.firstIndex());
            }
        }
    }

    /** The leader's own tail: finds what the library appended (last index, first-sighting times). */
    private int tailSelf(QueueReplica q, long now) {
        if (q.selfTail == null) {
            return 0;
        }
        int n = 0;
        long index;
        while (n < SELF_TAIL_PER_CYCLE && (index = q.selfTail.skipNext()) >= 0) {
            q.lastIndex = index;
            q.seen(index, now);
            n++;
        }
        return n;
    }

    /** Sends the next DATA batch of {@code q} to follower {@code p}; back-pressure keeps the frame for the next cycle. */
    private int ship(PeerLink p, QueueReplica q) {
        PeerLink.FollowerQueue f = p.progress[q.position];
        if (!f.streaming) {
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
            p.sessionMac.sign(f.pending, 0, f.pendingLength);
            f.pendingSequence = sequence;
        }
        long result = p.publication.offer(f.pending, 0, f.pendingLength);
        if (result > 0) {
            p.txSequence = sequence;
            f.pendingLength = 0;
            return 1;
        }
        if (result == Publication.NOT_CONNECTED || result == Publication.CLOSED) {
            p.dropSession(); // the follower is gone; it re-handshakes and HELLO tells where it stands
        } else if (result == Publication.MAX_POSITION_EXCEEDED) {
            LOG.log(System.Logger.Level.ERROR, "publication to " + p.id + " reached its maximum position; dropping the session");
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
        encoder.begin(f.pending, 0, FrameType.DATA, self, term, p.sessionId, 0) // sequence and MAC: see ship()
                .u16(q.position).u16(0);
        int countAt = encoder.position();
        encoder.i32(0).i64(q.quorumIndex);
        int count = 0;
        int bytes = 0;
        while (count < DataBody.MAX_COUNT) {
            int length = tailer.next();
            if (length < 0) {
                break;
            }
            int needed = 12 + length;
            if (needed > MAX_BATCH_BYTES) {
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
            if (count > 0 && bytes + needed > MAX_BATCH_BYTES) {
                tailer.unread();
                break;
            }
            encoder.i64(tailer.index()).i32(length).bytes(tailer.bytes(), 0, length);
            bytes += needed;
            count++;
            f.sentIndex = tailer.index();
        }
        if (count == 0) {
            f.pendingLength = 0;
            return;
        }
        encoder.putI32At(countAt, count);
        f.pendingLength = encoder.finish();
        f.quorumSent = Math.max(f.quorumSent, q.quorumIndex);
        f.pendingSequence = 0;
        q.bytesReplicated += bytes;
    }

    /**
     * The next EXCERPT_PART of the large excerpt in the tailer's array: pieces of up to {@link #MAX_BATCH_BYTES},
     * in order, one per frame, so a frame stays far below Aeron's message limit (1 MiB with 8 MiB terms) and a large
     * excerpt shares the publication with other queues' batches instead of holding it for 16 MiB.
     */
    private void buildPart(PeerLink p, QueueReplica q, PeerLink.FollowerQueue f) {
        int piece = Math.min(MAX_BATCH_BYTES, f.partTotal - f.partSent);
        encoder.begin(f.pending, 0, FrameType.EXCERPT_PART, self, term, p.sessionId, 0) // sequence and MAC: see ship()
                .u16(q.position).u16(0).i64(q.quorumIndex).i64(f.partIndex).i32(f.partTotal).i32(f.partSent)
                .bytes(f.tailer.bytes(), f.partSent, piece);
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

    /** The highest index a majority holds (the leader counts as holding all it has): published for the library. */
    private void updateQuorum(QueueReplica q, long now) {
        int n = config.peers().size();
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

    private void onHello(PeerLink p) {
        if (hello.queueCount() != queues.length) {
            refuse(p, RefusalReason.QUEUE_MISMATCH, RefusalBody.NO_QUEUE, queues.length,
                    "follower hosts " + hello.queueCount() + " queues, leader " + queues.length);
            return;
        }
        for (int q = 0; q < queues.length; q++) {
            if (!hello.queueName(q).equals(queues[q].spec.name())) {
                refuse(p, RefusalReason.QUEUE_MISMATCH, q, 0, "queue " + q + " is '" + queues[q].spec.name()
                        + "' on the leader, '" + hello.queueName(q) + "' on the follower");
                return;
            }
        }
        long now = System.nanoTime();
        for (int q = 0; q < queues.length; q++) {
            QueueReplica queue = queues[q];
            if (!queue.open || hello.lastIndex(q) == HelloBody.NOT_OPEN) {
                p.progress[q].reset(); // not open on one side yet: the follower says HELLO again when it has opened it
                continue;
            }
            if (queue.damage != null) {
                p.progress[q].reset();
                refuse(p, RefusalReason.CANNOT_STORE, q, -1, "the leader's copy of '" + queue.spec.name()
                        + "' is damaged: " + queue.damage);
                continue;
            }
            tailSelf(queue, now);
            while (tailSelf(queue, now) == SELF_TAIL_PER_CYCLE) {
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
                refuse(p, RefusalReason.BEHIND_RETENTION, q, first, "the follower needs the excerpt after 0x"
                        + Long.toHexString(shared) + " but the leader's first index is 0x" + Long.toHexString(first));
                continue;
            }
            f.tailer = tailer;
            f.streaming = true;
            f.state = QueueStatus.State.CATCHING_UP;
            sendDescriptor(p, queue, shared, first);
        }
    }

    private void sendDescriptor(PeerLink p, QueueReplica q, long resumeAfter, long first) {
        byte[] descriptorBytes = q.store.descriptorBytes();
        q.sentDescriptor = descriptorBytes;
        List<TermHistory.Entry> entries = q.history.entries();
        encoder.begin(tx, 0, FrameType.DESCRIPTOR, self, term, p.sessionId, ++p.txSequence)
                .u16(q.position).i64(resumeAfter).i64(first).u16(entries.size());
        for (TermHistory.Entry e : entries) {
            encoder.i64(e.term()).i64(e.previousLastIndex());
        }
        if (descriptorBytes == null) {
            encoder.i32(0);
        } else {
            encoder.i32(descriptorBytes.length).bytes(descriptorBytes, 0, descriptorBytes.length);
        }
        sendSession(p, encoder.finish());
    }

    private void onAck(PeerLink p) {
        int q = ack.queue();
        if (q >= queues.length) {
            drops.increment(DropReason.UNEXPECTED);
            return;
        }
        PeerLink.FollowerQueue f = p.progress[q];
        if (ack.durableIndex() > f.durableIndex) {
            f.durableIndex = ack.durableIndex();
        }
        f.state = ack.state();
    }

    // ------------------------------------------------------------------------------------------------ follower

    private int followerWork(long now) {
        for (QueueReplica q : queues) {
            if (q.open) {
                q.checksums.flushIfDue(now); // housekeeping: not counted as work, so the idle strategy still backs off
            }
        }
        PeerLink p = peers[leader];
        if (p.established) {
            if (now - p.lastHeardNanos > SESSION_TIMEOUT_NANOS) {
                LOG.log(System.Logger.Level.INFO, config.nodeId() + ": no frame from leader " + p.id + " for "
                        + SESSION_TIMEOUT_NANOS / 1_000_000 + " ms; reconnecting");
                p.dropSession();
                for (QueueReplica q : queues) {
                    q.synced = false;
                    if (q.state == QueueStatus.State.LIVE) {
                        q.state = QueueStatus.State.CATCHING_UP;
                    }
                }
                return 1;
            }
            if (now - lastHelloNanos > HELLO_RETRY_NANOS && awaitsDescriptor()) {
                sendHello(p); // the HELLO or its answer was lost (control frames are not retried forever)
                return 1;
            }
            return 0;
        }
        if (now - p.challengeSentNanos >= CHALLENGE_RETRY_NANOS) {
            p.challengeSentNanos = now;
            p.pendingSessionId = random.nextLong() & Long.MAX_VALUE;
            random.nextBytes(p.initiatorNonce);
            encoder.begin(tx, 0, FrameType.CHALLENGE, self, term, p.pendingSessionId, 0)
                    .bytes(p.initiatorNonce, 0, HandshakeBody.NONCE_LENGTH);
            int length = encoder.finish();
            handshakeMac.sign(tx, 0, length);
            p.publication.offer(tx, 0, length); // lost or refused: retried after CHALLENGE_RETRY_NANOS
            return 1;
        }
        return 0;
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

    private void sendHello(PeerLink p) {
        lastHelloNanos = System.nanoTime();
        encoder.begin(tx, 0, FrameType.HELLO, self, term, p.sessionId, ++p.txSequence).u16(queues.length);
        for (QueueReplica q : queues) {
            if (!q.open) {
                encoder.shortString(q.spec.name()).i64(HelloBody.NOT_OPEN).u16(0);
                continue;
            }
            encoder.shortString(q.spec.name()).i64(q.lastIndex).u16(q.history.entries().size());
            for (TermHistory.Entry e : q.history.entries()) {
                encoder.i64(e.term()).i64(e.previousLastIndex());
            }
        }
        sendSession(p, encoder.finish());
    }

    private void onDescriptor(PeerLink p) {
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
            refuse(p, RefusalReason.CANNOT_STORE, position, q.lastIndex, q.stateDetail);
            return;
        }
        sendAck(p, q);
    }

    private void onData(PeerLink p) {
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
        byte[] array = rx.byteArray();
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
    private void onExcerptPart(PeerLink p) {
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
                refuse(p, RefusalReason.CANNOT_STORE, position, q.lastIndex, q.stateDetail);
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
            sendHello(p);
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
        sendHello(p);
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
            refuse(p, RefusalReason.CANNOT_STORE, q.position, q.lastIndex, q.stateDetail);
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
        encoder.begin(tx, 0, FrameType.ACK, self, term, p.sessionId, ++p.txSequence)
                .u16(q.position).u8(q.state.ordinal()).i64(q.lastIndex);
        sendSession(p, encoder.finish());
    }

    // ------------------------------------------------------------------------------------------------ both

    private int heartbeats(long now) {
        int work = 0;
        for (PeerLink p : peers) {
            if (p != null && p.established && now - p.lastHeartbeatSentNanos >= HEARTBEAT_NANOS) {
                sendHeartbeat(p, now);
                work++;
            }
            if (p != null && p.established && role == NodeStatus.Role.LEADER && now - p.lastHeardNanos > SESSION_TIMEOUT_NANOS) {
                p.dropSession();
            }
        }
        return work;
    }

    private void sendHeartbeat(PeerLink p, long now) {
        p.lastHeartbeatSentNanos = now;
        encoder.begin(tx, 0, FrameType.HEARTBEAT, self, term, p.sessionId, ++p.txSequence).i64(now);
        if (role == NodeStatus.Role.LEADER) {
            encoder.u16(queues.length);
            for (QueueReplica q : queues) {
                encoder.i64(q.lastIndex).i64(q.quorumIndex);
                p.progress[q.position].quorumSent = q.quorumIndex;
            }
        } else {
            encoder.u16(0);
        }
        sendSession(p, encoder.finish());
    }

    private void sendSession(PeerLink p, int length) {
        p.sessionMac.sign(tx, 0, length);
        offerControl(p, tx, length);
    }

    /**
     * Control frames (acks, descriptors, heartbeats, refusals) are small and rare: a short retry under back-pressure;
     * a frame still refused is lost, and the protocol recovers (acks and heartbeats repeat; a lost descriptor times
     * out the session, which re-handshakes).
     */
    private void offerControl(PeerLink p, DirectBuffer buffer, int length) {
        for (int attempt = 0; attempt < 100; attempt++) {
            long result = p.publication.offer(buffer, 0, length);
            if (result > 0 || result == Publication.NOT_CONNECTED || result == Publication.CLOSED) {
                return;
            }
            driverInvoker.invoke();
            clientInvoker.invoke();
        }
    }

    private void refuse(PeerLink p, RefusalReason reason, int queue, long detail, String message) {
        boolean session = p.established;
        encoder.begin(tx, 0, FrameType.REFUSAL, self, term, session ? p.sessionId : frame.sessionId(),
                session ? ++p.txSequence : 0).u16(reason.code).u16(queue).i64(detail).message(message);
        int length = encoder.finish();
        (session ? p.sessionMac : handshakeMac).sign(tx, 0, length);
        offerControl(p, tx, length);
    }

    private void onFragment(DirectBuffer buffer, int offset, int length, Header header) {
        rx.putBytes(0, buffer, offset, length); // a heap copy: the MAC and the follower's write read it as an array
        try {
            frame.wrap(rx, 0, length);
        } catch (MalformedFrameException e) {
            drops.increment(DropReason.MALFORMED);
            return;
        }
        int sender = frame.sender();
        if (sender >= peers.length || sender == self) {
            drops.increment(DropReason.UNKNOWN_PEER);
            return;
        }
        PeerLink p = peers[sender];
        FrameType type = frame.type();
        boolean handshakeFrame = type == FrameType.CHALLENGE || type == FrameType.CHALLENGE_RESPONSE || type == FrameType.PROOF;
        boolean refusalBeforeSession = type == FrameType.REFUSAL && !(p.established && frame.sessionId() == p.sessionId);
        if (handshakeFrame || refusalBeforeSession) {
            if (!handshakeMac.verify(frame)) {
                drops.increment(DropReason.UNAUTHENTICATED);
                return;
            }
        } else {
            if (!p.established || frame.sessionId() != p.sessionId) {
                drops.increment(DropReason.UNKNOWN_SESSION);
                return;
            }
            if (!p.sessionMac.verify(frame)) {
                drops.increment(DropReason.BAD_MAC);
                return;
            }
            if (frame.sequence() <= p.rxSequence) {
                drops.increment(DropReason.REPLAYED);
                return;
            }
            p.rxSequence = frame.sequence();
        }
        if (frame.term() != term) {
            if (frame.term() < term) {
                drops.increment(DropReason.STALE_TERM);
                if (type != FrameType.REFUSAL) {
                    refuse(p, RefusalReason.STALE_TERM, RefusalBody.NO_QUEUE, term, "this node is at term " + term);
                }
            } else {
                drops.increment(DropReason.TERM_AHEAD); // only the admin endpoint moves this node's term
            }
            return;
        }
        try {
            dispatch(p, type);
        } catch (MalformedFrameException e) {
            drops.increment(DropReason.MALFORMED);
        }
    }

    private void dispatch(PeerLink p, FrameType type) throws MalformedFrameException {
        long now = System.nanoTime();
        switch (type) {
            case CHALLENGE -> {
                handshake.wrap(frame);
                if (role != NodeStatus.Role.LEADER) {
                    refuse(p, RefusalReason.NOT_LEADER, RefusalBody.NO_QUEUE, term, config.nodeId() + " is " + role);
                    return;
                }
                handshake.initiatorNonce(p.initiatorNonce);
                random.nextBytes(p.responderNonce);
                p.pendingSessionId = frame.sessionId();
                p.awaitingProof = true;
                byte[] proof = SessionCrypto.proof(credential, "responder", p.pendingSessionId, p.position, self, term,
                        p.initiatorNonce, p.responderNonce);
                encoder.begin(tx, 0, FrameType.CHALLENGE_RESPONSE, self, term, p.pendingSessionId, 0)
                        .bytes(p.initiatorNonce, 0, 32).bytes(p.responderNonce, 0, 32).bytes(proof, 0, 32);
                int length = encoder.finish();
                handshakeMac.sign(tx, 0, length);
                offerControl(p, tx, length);
            }
            case CHALLENGE_RESPONSE -> {
                handshake.wrap(frame);
                if (role != NodeStatus.Role.FOLLOWER || p.position != leader || frame.sessionId() != p.pendingSessionId) {
                    drops.increment(DropReason.UNEXPECTED);
                    return;
                }
                handshake.initiatorNonce(nonceScratch);
                if (!java.util.Arrays.equals(nonceScratch, p.initiatorNonce)) {
                    drops.increment(DropReason.UNAUTHENTICATED);
                    return;
                }
                handshake.responderNonce(p.responderNonce);
                handshake.proof(proofScratch);
                byte[] expected = SessionCrypto.proof(credential, "responder", p.pendingSessionId, self, p.position, term,
                        p.initiatorNonce, p.responderNonce);
                if (!SessionCrypto.proofEquals(expected, proofScratch)) {
                    drops.increment(DropReason.UNAUTHENTICATED);
                    return;
                }
                byte[] proof = SessionCrypto.proof(credential, "initiator", p.pendingSessionId, self, p.position, term,
                        p.initiatorNonce, p.responderNonce);
                encoder.begin(tx, 0, FrameType.PROOF, self, term, p.pendingSessionId, 0).bytes(proof, 0, 32);
                int length = encoder.finish();
                handshakeMac.sign(tx, 0, length);
                offerControl(p, tx, length);
                establish(p, self, p.position, now);
                for (QueueReplica q : queues) {
                    q.synced = false;
                    q.dropPart(); // a new session starts any large excerpt over
                }
                sendHello(p);
            }
            case PROOF -> {
                handshake.wrap(frame);
                if (role != NodeStatus.Role.LEADER || !p.awaitingProof || frame.sessionId() != p.pendingSessionId) {
                    drops.increment(DropReason.UNEXPECTED);
                    return;
                }
                handshake.proof(proofScratch);
                byte[] expected = SessionCrypto.proof(credential, "initiator", p.pendingSessionId, p.position, self, term,
                        p.initiatorNonce, p.responderNonce);
                if (!SessionCrypto.proofEquals(expected, proofScratch)) {
                    drops.increment(DropReason.UNAUTHENTICATED);
                    return;
                }
                p.dropSession();
                establish(p, p.position, self, now);
            }
            case HELLO -> {
                hello.wrap(frame);
                p.lastHeardNanos = now;
                if (role != NodeStatus.Role.LEADER) {
                    drops.increment(DropReason.UNEXPECTED);
                    return;
                }
                onHello(p);
            }
            case DESCRIPTOR -> {
                descriptor.wrap(frame);
                p.lastHeardNanos = now;
                if (role != NodeStatus.Role.FOLLOWER || p.position != leader) {
                    drops.increment(DropReason.UNEXPECTED);
                    return;
                }
                onDescriptor(p);
            }
            case DATA -> {
                data.wrap(frame);
                p.lastHeardNanos = now;
                if (role != NodeStatus.Role.FOLLOWER || p.position != leader) {
                    drops.increment(DropReason.UNEXPECTED);
                    return;
                }
                onData(p);
            }
            case EXCERPT_PART -> {
                part.wrap(frame);
                p.lastHeardNanos = now;
                if (role != NodeStatus.Role.FOLLOWER || p.position != leader) {
                    drops.increment(DropReason.UNEXPECTED);
                    return;
                }
                onExcerptPart(p);
            }
            case ACK -> {
                ack.wrap(frame);
                p.lastHeardNanos = now;
                if (role != NodeStatus.Role.LEADER) {
                    drops.increment(DropReason.UNEXPECTED);
                    return;
                }
                onAck(p);
            }
            case HEARTBEAT -> {
                heartbeat.wrap(frame);
                p.lastHeardNanos = now;
                if (role == NodeStatus.Role.FOLLOWER && p.position == leader) {
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
                        sendHello(p);
                    }
                }
            }
            case REFUSAL -> {
                refusal.wrap(frame);
                onRefusal(p);
            }
            default -> drops.increment(DropReason.UNEXPECTED);
        }
    }

    private void establish(PeerLink p, int initiator, int responder, long now) {
        p.sessionMac = SessionCrypto.sessionMac(credential, p.pendingSessionId, initiator, responder,
                p.initiatorNonce, p.responderNonce);
        p.sessionId = p.pendingSessionId;
        p.established = true;
        p.awaitingProof = false;
        p.txSequence = 0;
        p.rxSequence = 0;
        p.lastHeardNanos = now;
        p.lastHeartbeatSentNanos = 0;
    }

    private void onRefusal(PeerLink p) {
        String message = refusal.message();
        long now = System.nanoTime();
        if (refusal.reason() != lastRefusalLogged || now - lastRefusalLoggedNanos > 10_000_000_000L) {
            // a follower at another term than its leader is refused on every retry: log the news, not each retry
            lastRefusalLogged = refusal.reason();
            lastRefusalLoggedNanos = now;
            LOG.log(System.Logger.Level.WARNING, config.nodeId() + ": " + p.id + " refused: " + refusal.reason() + " " + message);
        }
        if (role != NodeStatus.Role.FOLLOWER || p.position != leader) {
            return;
        }
        int q = refusal.queue();
        if (refusal.reason() == RefusalReason.BEHIND_RETENTION && q < queues.length) {
            queues[q].state = QueueStatus.State.BEHIND_RETENTION;
            queues[q].stateDetail = message;
            queues[q].synced = false;
        }
    }
}
