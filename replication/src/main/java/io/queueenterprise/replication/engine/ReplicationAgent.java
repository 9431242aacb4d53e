package io.queueenterprise.replication.engine;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.ControlledFragmentAssembler;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.ControlledFragmentHandler.Action;
import io.aeron.logbuffer.Header;
import io.queueenterprise.queue.ReplicaStore;
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
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The node's one duty cycle: drives the embedded media driver (INVOKER mode) and the Aeron client conductor, takes
 * frames, ships excerpts (leader) or hands them to each queue's {@link QueueWriter} (follower), acks what the writers
 * wrote, heartbeats, restarts a dead Aeron client and driver, and runs the admin commands handed over by other
 * threads. Everything it owns is touched by this thread only (a queue's store: see {@link QueueWriter}).
 *
 * <p>It keeps the node's lifecycle, role and term, the admin commands, the status, the peer sessions (handshake,
 * timeouts, heartbeats) and the checks every received frame passes; the data path is in {@link LeaderSession} and
 * {@link FollowerSession}, control frames are built and offered by {@link ControlFrames}, and queues are opened off
 * this thread by {@link QueueOpener}.
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
public final class ReplicationAgent implements Agent, io.queueenterprise.replication.client.HostedQueues {
    private static final System.Logger LOG = System.getLogger(ReplicationAgent.class.getName());
    public static final int STREAM_ID = 0x5145; // "QE"
    static final int MAX_BATCH_BYTES = 64 * 1024;
    static final long HEARTBEAT_NANOS = 100_000_000L;
    /** How long the embedded client and driver tolerate a stalled duty thread (see startTransport). */
    static final long EMBEDDED_LIVENESS_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(120);
    /**
     * Test-only: a shorter liveness timeout (milliseconds), so that a test can stall a node past it in seconds. Not a
     * configuration field: in production the timeout only has to outlast any stall the node should survive in place.
     */
    public static final String LIVENESS_TIMEOUT_PROPERTY = "qe.node.test.embeddedLivenessTimeoutMs";
    static final long TRANSPORT_CHECK_NANOS = 100_000_000L;
    static final long TRANSPORT_RESTART_BACKOFF_NANOS = 5_000_000_000L;
    static final long SESSION_TIMEOUT_NANOS = 3_000_000_000L;
    static final long CHALLENGE_RETRY_NANOS = 250_000_000L;
    static final long HELLO_RETRY_NANOS = 1_000_000_000L;
    /** A queue whose writer has been blocked this long in the store says so in its state detail. */
    static final long WRITER_BLOCKED_REPORT_NANOS = 1_000_000_000L;
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
    /** Looks the peers' host names up off this thread; a publication is added once its peer's name resolves. */
    private final PeerResolver resolver;
    /** Some queue is not open yet: the duty cycle looks for it in the opener's slots. */
    private boolean queuesPending = true;
    /** Some queue waits for its writer to find its last index after a role change. */
    private boolean settling;
    private MediaDriver driver;
    private Aeron aeron;
    private AgentInvoker driverInvoker;
    private AgentInvoker clientInvoker;
    private Subscription subscription;
    private ControlledFragmentAssembler assembler;
    private PeerLink[] peers;
    private QueueReplica[] queues;

    private long term;
    private NodeStatus.Role role = NodeStatus.Role.STANDBY;
    private int leader = -1;

    private final ExpandableArrayBuffer rx = new ExpandableArrayBuffer(64 * 1024);
    private final Frame frame = new Frame();
    private final ControlFrames control;
    /** The follower's side of the data path; created with the queues in {@link #onStart}. */
    private FollowerSession follower;
    /** The leader's side of the data path; created with the peers in {@link #onStart}. */
    private LeaderSession leaderSession;
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
    private RefusalReason lastRefusalLogged;
    private long lastRefusalLoggedNanos;
    private volatile NodeStatus lastStatus;
    private final long embeddedLivenessTimeoutNs;
    private long lastTransportCheckNanos;
    private long lastTransportRestartNanos;
    private volatile String transportProblem;
    private volatile long transportRestarts;
    /** Why the latest restart of the transport was needed, and when it was tried (epoch ms); duty thread only (status). */
    private String lastTransportRestartCause;
    private long lastTransportRestartAtMillis;
    private volatile boolean closed;
    /** Why {@link #onStart} failed (a port taken, say); null while it has not failed. Any thread. */
    private volatile RuntimeException startFailure;
    /** Remote clients (its own class; one call per duty cycle): null when the node serves none. */
    private final io.queueenterprise.replication.client.ClientGateway clients;

    public ReplicationAgent(NodeConfig config, PeerCredential credential, Path aeronDirectory) {
        this(config, credential, aeronDirectory, null);
    }

    /** @param clients the remote-client gateway driven from this duty cycle, or null when the node serves none */
    public ReplicationAgent(NodeConfig config, PeerCredential credential, Path aeronDirectory,
                            io.queueenterprise.replication.client.ClientGateway clients) {
        this.clients = clients;
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
        this.control = new ControlFrames(me, handshakeMac);
        this.opener = new QueueOpener(config.nodeId(), config.queues(), config.dataDirectory(),
                () -> stateFile.read().role() == NodeStatus.Role.FOLLOWER);
        this.resolver = new PeerResolver(config.nodeId(), config.peers(), me);
        this.embeddedLivenessTimeoutNs = TimeUnit.MILLISECONDS.toNanos(
                Long.getLong(LIVENESS_TIMEOUT_PROPERTY, TimeUnit.NANOSECONDS.toMillis(EMBEDDED_LIVENESS_TIMEOUT_NS)));
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
        try {
            start();
        } catch (RuntimeException e) {
            startFailure = e; // before the runner calls onClose: the starting thread stops waiting at once
            throw e;
        }
    }

    /**
     * Why the duty cycle could not start (a replication or client port another process has bound, say), in one
     * sentence; null when it started or is starting. Any thread.
     */
    public RuntimeException startFailure() {
        return startFailure;
    }

    private void start() {
        CpuPinning.pinCurrentThread(config.nodeId());
        // Queues open on a thread of their own (QueueOpener): Chronicle can block for seconds opening one, and this
        // thread must keep invoking the media driver meanwhile. Each queue joins the duty cycle when it is ready.
        queues = new QueueReplica[config.queues().size()];
        for (int q = 0; q < queues.length; q++) {
            queues[q] = new QueueReplica(config.queues().get(q), q);
        }
        follower = new FollowerSession(queues, drops, control);
        opener.start();
        peers = new PeerLink[config.peers().size()];
        resolver.start();
        startTransport();
        leaderSession = new LeaderSession(self, queues, peers, drops, control);
        if (clients != null) {
            NodeConfig.Peer me = config.peers().get(self);
            try {
                clients.start(aeron, this);
            } catch (io.aeron.exceptions.AeronException e) {
                throw bindFailure("client port", me.host(), me.clientPort(), e);
            }
        }
        lastTransportCheckNanos = System.nanoTime();
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

    /**
     * Launches the embedded media driver and the Aeron client, the subscription and a publication per peer. Called at
     * start and again by {@link #restartTransport} once the pair died.
     */
    private void startTransport() {
        MediaDriver.Context driverContext = new MediaDriver.Context()
                .aeronDirectoryName(aeronDirectory.toString())
                .threadingMode(ThreadingMode.INVOKER)
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true)
                // Client and driver share this thread and process, so their mutual liveness checks guard nothing;
                // at Aeron's 10 s default a stall of the duty thread (Chronicle waiting out a dead writer's lock and
                // open header, 20-40 s measured after SIGKILL; a long GC or SIGSTOP) killed the client FATAL
                // ("service interval exceeded"). Peers still see a stalled node at once: image liveness and
                // connection timeouts keep their defaults. A longer stall still ends the pair: see restartTransport.
                .clientLivenessTimeoutNs(embeddedLivenessTimeoutNs)
                .publicationUnblockTimeoutNs(embeddedLivenessTimeoutNs + TimeUnit.SECONDS.toNanos(10))
                .termBufferSparseFile(true)
                .publicationTermBufferLength(8 * 1024 * 1024)
                .ipcTermBufferLength(1024 * 1024)
                .warnIfDirectoryExists(false);
        driver = MediaDriver.launch(driverContext);
        driverInvoker = driver.sharedAgentInvoker();
        aeron = Aeron.connect(new Aeron.Context()
                .aeronDirectoryName(aeronDirectory.toString())
                .useConductorAgentInvoker(true)
                .driverTimeoutMs(TimeUnit.NANOSECONDS.toMillis(embeddedLivenessTimeoutNs))
                .driverAgentInvoker(driverInvoker));
        clientInvoker = aeron.conductorAgentInvoker();
        control.invokers(driverInvoker, clientInvoker);

        NodeConfig.Peer me = config.peers().get(self);
        try {
            subscription = aeron.addSubscription(channel(me), STREAM_ID);
        } catch (io.aeron.exceptions.AeronException e) {
            throw bindFailure("replication port", me.host(), me.replicationPort(), e);
        }
        assembler = new ControlledFragmentAssembler(this::onFragment);
        for (int i = 0; i < peers.length; i++) {
            if (i != self) {
                if (peers[i] == null) {
                    peers[i] = new PeerLink(i, config.peers().get(i).id(), null, config.queues().size());
                }
                peers[i].publication = null;
                addPublication(peers[i]);
            }
        }
    }

    /**
     * A UDP port the media driver could not bind, in one sentence naming it ("replication port udp 127.0.0.1:7001
     * is in use"); Aeron's own message is a driver-side stack location around the OS's reason.
     */
    static ReplicationException bindFailure(String what, String host, int port, RuntimeException e) {
        String message = String.valueOf(e.getMessage());
        String where = what + " udp " + host + ":" + port;
        if (message.contains("Address already in use")) {
            return new ReplicationException(where + " is in use (another process has it bound)", e);
        }
        // "ERROR - channel error - <reason> (at <frame>): <channel>": the reason is what a person can act on
        java.util.regex.Matcher reason = java.util.regex.Pattern.compile("channel error - (.*?)( \\(at .*)?: aeron:.*").matcher(message);
        return new ReplicationException(where + " cannot be bound: " + (reason.find() ? reason.group(1) : message), e);
    }

    /**
     * Adds the publication to a peer whose host name resolved (see {@link PeerResolver}); until then the peer gets
     * nothing from this node (no handshake, no answer) and the reason is in {@link #unresolvedPeers()}.
     */
    private void addPublication(PeerLink p) {
        if (!resolver.resolved(p.position)) {
            return;
        }
        try {
            p.publication = aeron.addExclusivePublication(channel(config.peers().get(p.position)), STREAM_ID);
            resolver.connected(p.position);
        } catch (RuntimeException e) { // Aeron's own lookup failed (the name went away again) or the channel is refused
            LOG.log(System.Logger.Level.WARNING, config.nodeId() + ": no channel to peer " + p.id + " yet: " + e.getMessage());
            resolver.retry(p.position, "no channel to " + config.peers().get(p.position).host() + ": " + e.getMessage());
        }
    }

    /** Peers this node cannot send to yet, by id, with the reason (a host name that does not resolve). Any thread. */
    public java.util.Map<String, String> unresolvedPeers() {
        java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
        resolver.problems().forEach((position, problem) -> out.put(config.peers().get(position).id(), problem));
        return out;
    }

    /**
     * Whether the embedded Aeron client or driver has died: checked once per {@link #TRANSPORT_CHECK_NANOS}. Both run
     * on this thread (INVOKER mode), so a stall of this thread longer than their liveness timeout (SIGSTOP, a GC
     * pause, a JVM safepoint storm) makes the client fail ("service interval exceeded") and close every publication
     * and subscription; the node would then never replicate again. It restarts the pair instead.
     */
    private int checkTransport(long now) {
        if (now - lastTransportCheckNanos < TRANSPORT_CHECK_NANOS) {
            return 0;
        }
        lastTransportCheckNanos = now;
        for (PeerLink p : peers) {
            if (p != null && p.publication == null && transportProblem == null) {
                addPublication(p); // its name resolved since
            }
        }
        if (transportProblem == null && !aeron.isClosed() && !clientInvoker.isClosed() && !driverInvoker.isClosed()
                && !subscription.isClosed()) {
            return 0;
        }
        if (transportProblem != null && now - lastTransportRestartNanos < TRANSPORT_RESTART_BACKOFF_NANOS) {
            return 0;
        }
        restartTransport(now);
        return 1;
    }

    /**
     * Closes what is left of the dead client and driver and starts a new pair in the same directory: peers'
     * sessions are dropped, so followers handshake again and say HELLO, and the leader streams from where each
     * follower stands, as after any reconnect. On failure the reason stays in {@link #transportProblem()} (the node
     * is then neither ready nor healthy: Kubernetes restarts the pod) and the restart is tried again later.
     */
    private void restartTransport(long now) {
        lastTransportRestartNanos = now;
        transportRestarts++;
        String cause = transportProblem != null ? "still down after a failed restart (" + transportProblem + ")"
                : "the embedded Aeron client or driver closed (a duty-thread stall longer than "
                + TimeUnit.NANOSECONDS.toMillis(embeddedLivenessTimeoutNs) + " ms?)";
        LOG.log(System.Logger.Level.ERROR, config.nodeId() + ": " + cause + "; restarting it (restart "
                + transportRestarts + ")");
        transportProblem = "restarting the embedded Aeron client and driver: " + cause;
        lastTransportRestartCause = cause;
        lastTransportRestartAtMillis = System.currentTimeMillis();
        dropAllSessions();
        for (QueueReplica q : queues) {
            q.synced = false;
            q.dropPart();
            if (role == NodeStatus.Role.FOLLOWER && q.state == QueueStatus.State.LIVE) {
                q.state = QueueStatus.State.CATCHING_UP;
            }
        }
        closeQuietly(clients == null ? null : clients::close);
        for (PeerLink p : peers) {
            if (p != null && p.publication != null) {
                closeQuietly(p.publication::close);
            }
        }
        closeQuietly(subscription::close);
        closeQuietly(aeron::close);
        closeQuietly(driver::close);
        try {
            startTransport();
            if (clients != null) {
                clients.start(aeron, this);
            }
        } catch (RuntimeException e) {
            transportProblem = "the embedded Aeron client and driver could not be restarted: " + e;
            LOG.log(System.Logger.Level.ERROR, config.nodeId() + ": " + transportProblem, e);
            return;
        }
        transportProblem = null;
        if (role == NodeStatus.Role.FOLLOWER) {
            peers[leader].challengeSentNanos = now - CHALLENGE_RETRY_NANOS; // handshake at once
        }
        LOG.log(System.Logger.Level.INFO, config.nodeId() + ": embedded Aeron client and driver restarted");
    }

    private void closeQuietly(Runnable close) {
        if (close == null) {
            return;
        }
        try {
            close.run();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, config.nodeId() + ": closing a dead Aeron resource: " + e);
        }
    }

    /** Why the node's transport is down (restarting, or a restart failed); null when it is up. Any thread. */
    public String transportProblem() {
        return transportProblem;
    }

    /** How many times the embedded Aeron client and driver were restarted since start. Any thread. */
    public long transportRestarts() {
        return transportRestarts;
    }

    /** Test hook: closes the Aeron client as its conductor does when it dies, on the duty thread. */
    public void closeAeronClientForTest() {
        aeron.close();
    }

    /**
     * Test hook: the Aeron client and the media driver close, then {@code whileDown} runs, on the duty thread before
     * the node can notice (so that a test can take the node's UDP port and make the restart fail for real).
     */
    public void closeTransportForTest(Runnable whileDown) {
        aeron.close();
        driver.close();
        whileDown.run();
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
            q.quarantines = opened.quarantines();
            q.stateDetail = q.damage != null ? q.damage : opened.note() != null ? opened.note() : "";
            q.writer = new QueueWriter(config.nodeId(), q.spec.name(), q.store, q.checksums, q.lastIndex);
            q.acceptedIndex = q.lastIndex;
            q.open = true;
            adopted++;
            switch (role) {
                case LEADER -> leadQueue(q, now, q.lastIndex);
                case FOLLOWER -> followQueue(q, q.lastIndex);
                default -> stopQueue(q, role);
            }
        }
        if (adopted > 0 && role == NodeStatus.Role.FOLLOWER && peers[leader].established) {
            follower.sendHello(peers[leader], term); // the leader learns where the new queues stand
        }
        queuesPending = pending > 0;
        return adopted;
    }

    @Override
    public void onClose() {
        // onClose also runs after a failed onStart: everything below may be missing, and all of it is closed anyway.
        if (queues != null) {
            try {
                lastStatus = buildStatus();
            } catch (RuntimeException e) {
                LOG.log(startFailure == null ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG,
                        config.nodeId() + ": no status at close: " + e);
            }
        }
        closed = true;
        Command c;
        while ((c = commands.poll()) != null) {
            c.result.completeExceptionally(new ReplicationException("node " + config.nodeId() + " is closed"));
        }
        opener.close(); // queues opened but not taken are closed there
        resolver.close();
        if (queues != null) {
            for (QueueReplica q : queues) {
                if (q != null && q.open) {
                    closeTails(q);
                    if (!q.writer.stop(5, TimeUnit.SECONDS)) {
                        continue; // blocked inside Chronicle: closing the store under it could crash the JVM
                    }
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
        // Each closed on its own: a client that failed must not keep the driver (tens of MiB of shared memory) open.
        closeQuietly(clients == null ? null : clients::close);
        closeQuietly(aeron == null ? null : aeron::close);
        closeQuietly(driver == null ? null : driver::close);
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
        if (settling) {
            work += settleQueues(System.nanoTime());
        }
        work += subscription.controlledPoll(assembler, 64);
        long now = System.nanoTime();
        if (role == NodeStatus.Role.LEADER) {
            work += leaderSession.work(now, term);
            for (PeerLink p : peers) {
                if (p != null && p.established && leaderSession.quorumNewsFor(p)) {
                    sendHeartbeat(p, now); // followers bound replicated reads by it: tell them now, not at the next beat
                    work++;
                }
            }
        } else if (role == NodeStatus.Role.FOLLOWER) {
            work += followerWork(now);
        }
        work += heartbeats(now);
        work += checkTransport(now);
        if (clients != null) {
            work += clients.doWork(now);
        }
        return work;
    }

    // ------------------------------------------------------------------------------------------------ HostedQueues
    // (what the client gateway reads, on this thread)

    @Override
    public NodeStatus.Role role() {
        return role;
    }

    @Override
    public long term() {
        return term;
    }

    @Override
    public int leaderPosition() {
        return leader;
    }

    @Override
    public int queueCount() {
        return queues.length;
    }

    @Override
    public NodeConfig.QueueSpec spec(int queue) {
        return queues[queue].spec;
    }

    @Override
    public ReplicaStore store(int queue) {
        QueueReplica q = queues[queue];
        return q.active() ? q.store : null; // not yet handed over by the queue opener, or settling after a role change
    }

    @Override
    public long quorumIndex(int queue) {
        return queues[queue].quorumIndex;
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
        for (QueueReplica q : queues) {
            if (q.open) {
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
        q.settling = true;
        q.roleGeneration++;
        q.settleRequested = q.writer.findLast(q.roleGeneration);
        q.writer.wake();
        q.synced = false;
        q.waitingForWriter = false;
        q.helloWhenDrained = false;
        q.ringFullSinceNanos = 0;
        q.dropPart();
        if (q.damage == null) {
            q.state = QueueStatus.State.STOPPED;
            q.stateDetail = "finding the last index for the new role";
        }
        settling = true;
    }

    /** Queues whose writer found their last index take the node's current role. */
    private int settleQueues(long now) {
        int work = 0;
        boolean stillSettling = false;
        boolean joinedAsFollower = false;
        for (QueueReplica q : queues) {
            if (!q.settling) {
                continue;
            }
            if (!q.settleRequested) {
                q.settleRequested = q.writer.findLast(q.roleGeneration);
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
                    q.stateDetail = "finding the last index for the new role: its writer has been blocked in the store for "
                            + blocked / 1_000_000 + " ms";
                }
                continue;
            }
            q.settling = false;
            work++;
            if (last == QueueWriter.SCAN_FAILED) {
                q.state = QueueStatus.State.CORRUPTED;
                q.stateDetail = String.valueOf(q.writer.failure());
                LOG.log(System.Logger.Level.ERROR, q.spec.name() + ": " + q.stateDetail);
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
        if (joinedAsFollower && peers[leader].established) {
            follower.sendHello(peers[leader], term); // the leader learns where the settled queues stand
        }
        return work;
    }

    /** No queue is waiting for its last index after a role change. Duty-cycle thread. */
    public boolean settled() {
        return !settling;
    }

    /**
     * {@code last}: the queue's last index, read by the caller; a queue that just joined passes what the opener read,
     * since Chronicle's scan for the end can take seconds on a queue a killed writer left incomplete.
     */
    private void leadQueue(QueueReplica q, long now, long last) {
        closeTails(q);
        if (q.damage != null) {
            q.store.publishWritableTerm(-1); // a damaged copy is neither served nor written
            q.state = QueueStatus.State.CORRUPTED;
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
        q.state = QueueStatus.State.LIVE;
        q.stateDetail = "";
        q.synced = false;
        leaderSession.updateQuorum(q, now);
        q.store.publishWritableTerm(term);
    }

    private void becomeFollower(int leaderPosition) {
        dropAllSessions();
        role = NodeStatus.Role.FOLLOWER;
        leader = leaderPosition;
        for (QueueReplica q : queues) {
            if (q.open) {
                q.store.publishWritableTerm(-1); // at once: no library appender writes here from now on
                q.store.recordReplica();
                settle(q);
            }
        }
        peers[leaderPosition].challengeSentNanos = System.nanoTime() - CHALLENGE_RETRY_NANOS;
    }

    /** {@code last}: as for {@link #leadQueue}. */
    private void followQueue(QueueReplica q, long last) {
        q.store.publishWritableTerm(-1); // before anything else: no library appender writes here from now on
        q.store.recordReplica();
        closeTails(q);
        q.lastIndex = last;
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
        q.settling = false; // a fenced or standby queue needs no last index
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
                list.add(new QueueStatus(q.spec.name(), QueueStatus.State.STOPPED, -1, -1, -1, -1, progress, 0, drops.total(),
                        q.stateDetail, QueueStatus.Writer.NONE, q.resyncs, q.quarantines));
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
            long blocked = q.writer.busyNanos(now);
            q.trackWriterStall(blocked);
            QueueStatus.Writer writer = new QueueStatus.Writer(TimeUnit.NANOSECONDS.toMillis(blocked), q.writerStalls,
                    q.lastWriterStallAt);
            list.add(new QueueStatus(q.spec.name(), q.state, q.lastIndex, durable, q.quorumIndex, q.store.firstIndex(),
                    progress, q.bytesReplicated, drops.total(), q.stateDetail, writer, q.resyncs, q.quarantines));
        }
        NodeStatus status = new NodeStatus(config.nodeId(), role, term, leader < 0 ? null : config.peers().get(leader).id(), list,
                transportStatus(), peerAddresses());
        lastStatus = status;
        return status;
    }

    /** The embedded client and driver as the status reports them. Duty-cycle thread. */
    private NodeStatus.Transport transportStatus() {
        String problem = transportProblem;
        if (problem == null && (aeron == null || subscription == null || aeron.isClosed() || clientInvoker.isClosed()
                || driverInvoker.isClosed() || subscription.isClosed())) {
            problem = "the embedded Aeron client or driver closed; the node restarts them within "
                    + TimeUnit.NANOSECONDS.toMillis(TRANSPORT_CHECK_NANOS) + " ms";
        }
        return new NodeStatus.Transport(problem == null, problem, transportRestarts, lastTransportRestartCause,
                lastTransportRestartAtMillis == 0 ? null : java.time.Instant.ofEpochMilli(lastTransportRestartAtMillis).toString());
    }

    /** Every other peer: whether this node has a channel to its address, and the latest reason it had none. */
    private List<NodeStatus.PeerAddress> peerAddresses() {
        List<NodeStatus.PeerAddress> out = new ArrayList<>(config.peers().size());
        for (int i = 0; i < config.peers().size(); i++) {
            if (i == self) {
                continue;
            }
            NodeConfig.Peer peer = config.peers().get(i);
            String problem = resolver.problem(i);
            boolean resolved = problem == null && resolver.resolved(i);
            if (!resolved && problem == null) {
                problem = "host '" + peer.host() + "' is being looked up";
            }
            long at = resolver.lastProblemAtMillis(i);
            out.add(new NodeStatus.PeerAddress(peer.id(), peer.host(), resolved, problem, resolver.lastProblem(i),
                    at == 0 ? null : java.time.Instant.ofEpochMilli(at).toString()));
        }
        return out;
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

    // ------------------------------------------------------------------------------------------------ follower

    private int followerWork(long now) {
        PeerLink p = peers[leader];
        int written = follower.pollWriters(p.established ? p : null, term, now);
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
            if (follower.helloDue(now)) {
                follower.sendHello(p, term); // the HELLO or its answer was lost (control frames are not retried forever)
                return written + 1;
            }
            return written;
        }
        if (now - p.challengeSentNanos >= CHALLENGE_RETRY_NANOS) {
            p.challengeSentNanos = now;
            p.pendingSessionId = random.nextLong() & Long.MAX_VALUE;
            random.nextBytes(p.initiatorNonce);
            control.handshake(FrameType.CHALLENGE, term, p.pendingSessionId).bytes(p.initiatorNonce, 0, HandshakeBody.NONCE_LENGTH);
            control.sendHandshake(p, true); // lost or refused: retried after CHALLENGE_RETRY_NANOS
            return written + 1;
        }
        return written;
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
        FrameEncoder out = control.session(FrameType.HEARTBEAT, term, p).i64(now);
        if (role == NodeStatus.Role.LEADER) {
            out.u16(queues.length);
            for (QueueReplica q : queues) {
                out.i64(q.lastIndex).i64(q.quorumIndex);
                p.progress[q.position].quorumSent = q.quorumIndex;
            }
        } else {
            out.u16(0);
        }
        control.sendSession(p);
    }

    private void refuse(PeerLink p, RefusalReason reason, int queue, long detail, String message) {
        control.refuse(p, term, frame.sessionId(), reason, queue, detail, message);
    }

    /**
     * One frame from the subscription. ABORT leaves it there, to be read again next cycle: a follower's writer had no
     * room for it (back-pressure; see {@link FollowerSession}).
     */
    private Action onFragment(DirectBuffer buffer, int offset, int length, Header header) {
        rx.putBytes(0, buffer, offset, length); // a heap copy: the MAC and the follower's write read it as an array
        try {
            frame.wrap(rx, 0, length);
        } catch (MalformedFrameException e) {
            drops.increment(DropReason.MALFORMED);
            return Action.CONTINUE;
        }
        int sender = frame.sender();
        if (sender >= peers.length || sender == self) {
            drops.increment(DropReason.UNKNOWN_PEER);
            return Action.CONTINUE;
        }
        PeerLink p = peers[sender];
        long previousSequence = p.rxSequence;
        FrameType type = frame.type();
        boolean handshakeFrame = type == FrameType.CHALLENGE || type == FrameType.CHALLENGE_RESPONSE || type == FrameType.PROOF;
        boolean refusalBeforeSession = type == FrameType.REFUSAL && !(p.established && frame.sessionId() == p.sessionId);
        if (handshakeFrame || refusalBeforeSession) {
            if (!handshakeMac.verify(frame)) {
                drops.increment(DropReason.UNAUTHENTICATED);
                return Action.CONTINUE;
            }
        } else {
            if (!p.established || frame.sessionId() != p.sessionId) {
                drops.increment(DropReason.UNKNOWN_SESSION);
                return Action.CONTINUE;
            }
            if (!p.sessionMac.verify(frame)) {
                drops.increment(DropReason.BAD_MAC);
                return Action.CONTINUE;
            }
            if (frame.sequence() <= p.rxSequence) {
                drops.increment(DropReason.REPLAYED);
                return Action.CONTINUE;
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
            return Action.CONTINUE;
        }
        try {
            if (!dispatch(p, type)) {
                p.rxSequence = previousSequence; // read again next cycle: not a replay
                p.lastHeardNanos = System.nanoTime(); // the leader is talking; this node is not listening yet
                return Action.ABORT;
            }
        } catch (MalformedFrameException e) {
            drops.increment(DropReason.MALFORMED);
        }
        return Action.CONTINUE;
    }

    /** @return false to read the frame again next cycle (back-pressure from a follower's writer) */
    private boolean dispatch(PeerLink p, FrameType type) throws MalformedFrameException {
        long now = System.nanoTime();
        switch (type) {
            case CHALLENGE -> {
                handshake.wrap(frame);
                if (role != NodeStatus.Role.LEADER) {
                    refuse(p, RefusalReason.NOT_LEADER, RefusalBody.NO_QUEUE, term, config.nodeId() + " is " + role);
                    return true;
                }
                handshake.initiatorNonce(p.initiatorNonce);
                random.nextBytes(p.responderNonce);
                p.pendingSessionId = frame.sessionId();
                p.awaitingProof = true;
                byte[] proof = SessionCrypto.proof(credential, "responder", p.pendingSessionId, p.position, self, term,
                        p.initiatorNonce, p.responderNonce);
                control.handshake(FrameType.CHALLENGE_RESPONSE, term, p.pendingSessionId)
                        .bytes(p.initiatorNonce, 0, 32).bytes(p.responderNonce, 0, 32).bytes(proof, 0, 32);
                control.sendHandshake(p, false);
            }
            case CHALLENGE_RESPONSE -> {
                handshake.wrap(frame);
                if (role != NodeStatus.Role.FOLLOWER || p.position != leader || frame.sessionId() != p.pendingSessionId) {
                    drops.increment(DropReason.UNEXPECTED);
                    return true;
                }
                handshake.initiatorNonce(nonceScratch);
                if (!java.util.Arrays.equals(nonceScratch, p.initiatorNonce)) {
                    drops.increment(DropReason.UNAUTHENTICATED);
                    return true;
                }
                handshake.responderNonce(p.responderNonce);
                handshake.proof(proofScratch);
                byte[] expected = SessionCrypto.proof(credential, "responder", p.pendingSessionId, self, p.position, term,
                        p.initiatorNonce, p.responderNonce);
                if (!SessionCrypto.proofEquals(expected, proofScratch)) {
                    drops.increment(DropReason.UNAUTHENTICATED);
                    return true;
                }
                byte[] proof = SessionCrypto.proof(credential, "initiator", p.pendingSessionId, self, p.position, term,
                        p.initiatorNonce, p.responderNonce);
                control.handshake(FrameType.PROOF, term, p.pendingSessionId).bytes(proof, 0, 32);
                control.sendHandshake(p, false);
                establish(p, self, p.position, now);
                for (QueueReplica q : queues) {
                    q.synced = false;
                    q.dropPart(); // a new session starts any large excerpt over
                }
                follower.sendHello(p, term);
            }
            case PROOF -> {
                handshake.wrap(frame);
                if (role != NodeStatus.Role.LEADER || !p.awaitingProof || frame.sessionId() != p.pendingSessionId) {
                    drops.increment(DropReason.UNEXPECTED);
                    return true;
                }
                handshake.proof(proofScratch);
                byte[] expected = SessionCrypto.proof(credential, "initiator", p.pendingSessionId, p.position, self, term,
                        p.initiatorNonce, p.responderNonce);
                if (!SessionCrypto.proofEquals(expected, proofScratch)) {
                    drops.increment(DropReason.UNAUTHENTICATED);
                    return true;
                }
                p.dropSession();
                establish(p, p.position, self, now);
            }
            case HELLO -> {
                hello.wrap(frame);
                p.lastHeardNanos = now;
                if (role != NodeStatus.Role.LEADER) {
                    drops.increment(DropReason.UNEXPECTED);
                    return true;
                }
                leaderSession.onHello(p, hello, term);
            }
            case DESCRIPTOR -> {
                descriptor.wrap(frame);
                p.lastHeardNanos = now;
                if (role != NodeStatus.Role.FOLLOWER || p.position != leader) {
                    drops.increment(DropReason.UNEXPECTED);
                    return true;
                }
                follower.onDescriptor(p, descriptor, term);
            }
            case DATA -> {
                data.wrap(frame);
                p.lastHeardNanos = now;
                if (role != NodeStatus.Role.FOLLOWER || p.position != leader) {
                    drops.increment(DropReason.UNEXPECTED);
                    return true;
                }
                return follower.onData(p, data, frame.length(), term, now);
            }
            case EXCERPT_PART -> {
                part.wrap(frame);
                p.lastHeardNanos = now;
                if (role != NodeStatus.Role.FOLLOWER || p.position != leader) {
                    drops.increment(DropReason.UNEXPECTED);
                    return true;
                }
                return follower.onExcerptPart(p, part, term, now);
            }
            case ACK -> {
                ack.wrap(frame);
                p.lastHeardNanos = now;
                if (role != NodeStatus.Role.LEADER) {
                    drops.increment(DropReason.UNEXPECTED);
                    return true;
                }
                leaderSession.onAck(p, ack);
            }
            case HEARTBEAT -> {
                heartbeat.wrap(frame);
                p.lastHeardNanos = now;
                if (role == NodeStatus.Role.FOLLOWER && p.position == leader) {
                    follower.onHeartbeat(p, heartbeat, term);
                }
            }
            case REFUSAL -> {
                refusal.wrap(frame);
                onRefusal(p);
            }
            default -> drops.increment(DropReason.UNEXPECTED);
        }
        return true;
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
