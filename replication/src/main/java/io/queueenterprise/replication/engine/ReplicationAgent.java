package io.queueenterprise.replication.engine;

import io.queueenterprise.protocol.transport.EmbeddedTransport;
import io.aeron.Aeron;
import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.client.ClientGateway;
import io.queueenterprise.replication.client.HostedQueues;
import io.queueenterprise.replication.session.PeerCredential;
import io.queueenterprise.replication.session.PeerIdentities;
import io.queueenterprise.replication.session.SessionCrypto;
import org.agrona.concurrent.Agent;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The node's one duty cycle, which only dispatches: each cycle it invokes the {@link EmbeddedTransport} (media driver
 * and Aeron client, INVOKER mode), adopts queues the {@link QueueOpener} made ready, runs the admin commands other
 * threads handed over, lets the {@link RoleController} settle queues after a role change, polls the peers' frames
 * into {@link InboundFrames}, leads ({@link LeaderSession}) or follows ({@link FollowerSession}), keeps the
 * {@link PeerSessions} (handshake, heartbeats, timeouts), checks the transport and drives the remote-client gateway.
 * Its status is built by {@link StatusBuilder}. Everything it owns is touched by this thread only (a queue's store:
 * see {@link QueueWriter}).
 */
public final class ReplicationAgent implements Agent, HostedQueues {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationAgent.class);
    public static final int STREAM_ID = PeerChannels.STREAM_ID;
    static final int MAX_BATCH_BYTES = 64 * 1024;
    static final long HEARTBEAT_NANOS = 100_000_000L;
    static final long HELLO_RETRY_NANOS = 1_000_000_000L;
    /** Excerpts a leader's own tail takes per duty cycle and queue, so one busy queue cannot starve the rest. */
    static final int SELF_TAIL_PER_CYCLE = 4096;
    /** How long the embedded client and driver tolerate a stalled duty thread (see {@link EmbeddedTransport}). */
    static final long EMBEDDED_LIVENESS_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(120);
    /**
     * Test-only: a shorter liveness timeout (milliseconds), so that a test can stall a node past it in seconds. Not a
     * configuration field: in production the timeout only has to outlast any stall the node should survive in place.
     */
    public static final String LIVENESS_TIMEOUT_PROPERTY = "qe.node.test.embeddedLivenessTimeoutMs";

    private final EngineSettings settings;
    private final int self;
    private final PeerCredential credential;
    private final PeerIdentities identities;
    private final SessionCrypto.FrameMac handshakeMac;
    private final NodeStateFile stateFile;
    private final DropCounters drops = new DropCounters();
    private final java.util.concurrent.atomic.AtomicLong sessionsEstablished = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong identitySessionsClosed = new java.util.concurrent.atomic.AtomicLong();
    /** The pins' generation the live sessions were last checked against ({@link PeerIdentities#generation()}). */
    private int pinsChecked;
    private final AdminCommands<ReplicationAgent> commands;
    private final EmbeddedTransport transport;
    private final ControlFrames control;
    private final QueueOpener opener;
    /** Looks the peers' host names up off this thread; a publication is added once its peer's name resolves. */
    private final PeerResolver resolver;
    /** Remote clients (its own class; one call per duty cycle): null when the node serves none. */
    private final ClientGateway clients;

    // made in onStart
    private QueueReplica[] queues;
    private PeerLink[] peers;
    private FollowerSession follower;
    private LeaderSession leaderSession;
    private RoleController roles;
    private PeerSessions sessions;
    private PeerChannels channels;
    private StatusBuilder statusBuilder;

    private volatile NodeStatus lastStatus;
    /** Why {@link #onStart} failed (a port taken, say); null while it has not failed. Any thread. */
    private volatile RuntimeException startFailure;

    /**
     * @param identities this node's identity key and every replica's public key (docs/replication.md, per-node identity)
     * @param clients    the remote-client gateway driven from this duty cycle, or null when the node serves none
     */
    public ReplicationAgent(EngineSettings settings, PeerCredential credential, PeerIdentities identities, Path aeronDirectory,
                            ClientGateway clients) {
        this.settings = settings;
        this.self = settings.selfPosition();
        this.clients = clients;
        this.credential = credential;
        this.identities = identities;
        this.handshakeMac = SessionCrypto.handshakeMac(credential);
        this.stateFile = new NodeStateFile(settings.dataDirectory());
        this.commands = new AdminCommands<>(settings.nodeId());
        long liveness = TimeUnit.MILLISECONDS.toNanos(
                Long.getLong(LIVENESS_TIMEOUT_PROPERTY, TimeUnit.NANOSECONDS.toMillis(EMBEDDED_LIVENESS_TIMEOUT_NS)));
        this.transport = new EmbeddedTransport(settings.nodeId(), aeronDirectory, liveness, 8 * 1024 * 1024, 1024 * 1024);
        this.control = new ControlFrames(self, handshakeMac, transport);
        this.opener = new QueueOpener(settings.nodeId(), settings.queues(), settings.dataDirectory(),
                () -> stateFile.read().role() == NodeStatus.Role.FOLLOWER);
        this.resolver = new PeerResolver(settings.nodeId(), settings.peers(), self);
    }

    /**
     * Every queue was tried once: opened (and taken by the duty cycle once it runs its next cycle) or failed, then
     * retried in the background while the others replicate. Any thread.
     */
    public boolean queuesTriedOnce() {
        return opener.firstPassDone();
    }

    @Override
    public String roleName() {
        return "qe-replication-" + settings.nodeId();
    }

    public DropCounters drops() {
        return drops;
    }

    /**
     * Authenticated sessions established since start, with any peer: a new one means a handshake completed (a session
     * started or was replaced); replayed or reflected frames never add one. Any thread.
     */
    public long sessionsEstablished() {
        return sessionsEstablished.get();
    }

    /** Sessions closed since start because their peer's identity pin changed to a key they had not proved. Any thread. */
    public long identitySessionsClosed() {
        return identitySessionsClosed.get();
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
        CpuPinning.pinCurrentThread(settings.nodeId());
        // Queues open on a thread of their own (QueueOpener): Chronicle can block for seconds opening one, and this
        // thread must keep invoking the media driver meanwhile. Each queue joins the duty cycle when it is ready.
        queues = new QueueReplica[settings.queues().size()];
        for (int q = 0; q < queues.length; q++) {
            queues[q] = new QueueReplica(settings.queues().get(q), q);
        }
        peers = new PeerLink[settings.peers().size()];
        for (int i = 0; i < peers.length; i++) {
            if (i != self) {
                peers[i] = new PeerLink(i, settings.peers().get(i).id(), null, queues.length);
            }
        }
        follower = new FollowerSession(queues, drops, control);
        leaderSession = new LeaderSession(self, queues, peers, drops, control);
        roles = new RoleController(settings, stateFile, queues, peers, leaderSession, follower);
        sessions = new PeerSessions(settings, credential, identities, control, roles, peers, queues, follower, sessionsEstablished,
                identitySessionsClosed);
        pinsChecked = identities.generation();
        channels = new PeerChannels(settings, peers, resolver,
                new InboundFrames(settings, handshakeMac, drops, control, roles, sessions, leaderSession, follower, peers, queues));
        statusBuilder = new StatusBuilder(settings, roles, queues, peers, drops, transport, resolver, identities, sessions);
        opener.start();
        resolver.start();
        transport.start(new Attachments(), System.nanoTime());
        roles.restore(stateFile.read());
        lastStatus = buildStatus();
    }

    /** What runs on the transport: the peers' channels and the client gateway; the sessions start over after a restart. */
    private final class Attachments implements EmbeddedTransport.Attachments {
        @Override
        public void attach(Aeron aeron) {
            channels.attach(aeron);
            if (clients != null) {
                EngineSettings.Peer me = settings.self();
                try {
                    clients.start(aeron, ReplicationAgent.this);
                } catch (io.aeron.exceptions.AeronException e) {
                    throw PeerChannels.bindFailure("client port", me.host(), me.clientPort(), e);
                }
            }
            if (roles.role() == NodeStatus.Role.FOLLOWER) {
                peers[roles.leader()].challengeAtOnce(System.nanoTime()); // after a restart: handshake at once
            }
        }

        /** Peers handshake again and the leader streams from where each follower stands, as after any reconnect. */
        @Override
        public void detach() {
            roles.dropAllSessions();
            for (QueueReplica q : queues) {
                q.sessionLost("transport detached");
                q.dropPart();
            }
            closeQuietly(clients == null ? null : clients::close);
            channels.detach();
        }

        @Override
        public boolean closed() {
            return channels.closed();
        }

        @Override
        public void onCheck() {
            channels.addMissingPublications(); // names that resolved since
        }
    }

    private void closeQuietly(Runnable close) {
        EmbeddedTransport.closeQuietly(settings.nodeId(), close);
    }

    /** Peers this node cannot send to yet, by id, with the reason (a host name that does not resolve). Any thread. */
    public java.util.Map<String, String> unresolvedPeers() {
        java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
        resolver.problems().forEach((position, problem) -> out.put(settings.peers().get(position).id(), problem));
        return out;
    }

    /** Why the node's transport is down (restarting, or a restart failed); null when it is up. Any thread. */
    public String transportProblem() {
        return transport.problem();
    }

    /** How many times the embedded Aeron client and driver were restarted since start. Any thread. */
    public long transportRestarts() {
        return transport.restarts();
    }

    /** Test hook: closes the Aeron client as its conductor does when it dies, on the duty thread. */
    public void closeAeronClientForTest() {
        transport.closeClientForTest();
    }

    /**
     * Test hook: the Aeron client and the media driver close, then {@code whileDown} runs, on the duty thread before
     * the node can notice (so that a test can take the node's UDP port and make the restart fail for real).
     */
    public void closeTransportForTest(Runnable whileDown) {
        transport.closeForTest(whileDown);
    }

    @Override
    public void onClose() {
        // onClose also runs after a failed onStart: everything below may be missing, and all of it is closed anyway.
        if (statusBuilder != null) {
            try {
                lastStatus = buildStatus();
            } catch (RuntimeException e) {
                String why = settings.nodeId() + ": no status at close: " + e;
                if (startFailure == null) {
                    LOG.warn(why);
                } else {
                    LOG.debug(why); // a node that never started has no status to keep: the start failure says why
                }
            }
        }
        commands.close();
        opener.close(); // queues opened but not taken are closed there
        resolver.close();
        if (queues != null) {
            for (QueueReplica q : queues) {
                if (q != null && q.open()) {
                    roles.closeTails(q);
                    if (!q.writer.stop(5, TimeUnit.SECONDS)) {
                        continue; // blocked inside Chronicle: closing the store under it could crash the JVM
                    }
                    if (q.checksums != null) {
                        q.checksums.close();
                    }
                    if (roles.role() == NodeStatus.Role.LEADER) {
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
        transport.close();
    }

    @Override
    public int doWork() {
        int work = transport.invoke();
        if (roles.queuesPending()) {
            work += roles.adoptOpened(opener, System.nanoTime()); // before commands: a command sees every queue opened so far
        }
        work += commands.run(this);
        work += roles.settleQueues(System.nanoTime());
        work += channels.poll(64);
        int pins = identities.generation(); // a volatile read; the file's pins change seldom
        if (pins != pinsChecked) {
            pinsChecked = pins;
            work += 1 + sessions.recheckIdentities();
        }
        long now = System.nanoTime();
        if (roles.role() == NodeStatus.Role.LEADER) {
            work += roles.updateLease(now);
            work += leaderSession.work(now, roles.term(), roles.acknowledgingAfterUpdate(now));
            for (PeerLink p : peers) {
                if (p != null && p.established() && leaderSession.quorumNewsFor(p)) {
                    sessions.sendHeartbeat(p, now); // followers bound replicated reads by it: tell them now
                    work++;
                }
            }
        } else if (roles.role() == NodeStatus.Role.FOLLOWER) {
            work += sessions.followerLink(now);
        }
        work += sessions.heartbeats(now);
        work += transport.check(now);
        if (clients != null) {
            work += clients.doWork(now);
        }
        return work;
    }

    // ------------------------------------------------------------------------------------------------ HostedQueues
    // (what the client gateway reads, on this thread)

    @Override
    public NodeStatus.Role role() {
        return roles.role();
    }

    @Override
    public long term() {
        return roles.term();
    }

    @Override
    public int leaderPosition() {
        return roles.leader();
    }

    @Override
    public int queueCount() {
        return queues.length;
    }

    @Override
    public EngineSettings.QueueSettings spec(int queue) {
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

    @Override
    public boolean mayAcknowledge(long now) {
        return now < roles.acknowledgeUntil(now);
    }

    // ------------------------------------------------------------------------------------------------ commands

    /** Runs {@code action} on the duty-cycle thread and returns its result (exceptions are rethrown here). */
    public <T> CompletableFuture<T> submit(Function<ReplicationAgent, T> action) {
        return commands.submit(action);
    }

    /** Promote: see {@link io.queueenterprise.replication.NodeControl#promote}. Duty-cycle thread. */
    public NodeStatus promote(long newTerm) {
        roles.promote(newTerm);
        return buildStatus();
    }

    public NodeStatus follow(String leaderId, long newTerm) {
        roles.follow(leaderId, newTerm);
        return buildStatus();
    }

    public NodeStatus fence(long newTerm) {
        roles.fence(newTerm);
        return buildStatus();
    }

    /** No queue is waiting for its last index after a role change. Duty-cycle thread. */
    public boolean settled() {
        return roles.settled();
    }

    // ------------------------------------------------------------------------------------------------ status

    /** Called on the duty-cycle thread; from others use {@link #lastStatus()}. */
    public NodeStatus buildStatus() {
        NodeStatus status = statusBuilder.build();
        lastStatus = status;
        return status;
    }

    /** The status as of the last duty cycle that built one (after close: the final one). */
    public NodeStatus lastStatus() {
        return lastStatus;
    }

    public org.HdrHistogram.Histogram ackLatencySinceLastCall(String queue) {
        return queue(queue).ackLatency.getIntervalHistogram();
    }

    /**
     * For tests: while {@code hold}, this node, leading, does not look at its queues' descriptor files every
     * heartbeat interval; a follower then learns of a new descriptor only from the leader's other paths (its HELLO's
     * answer, or the first excerpt after a follower was answered with none). Duty thread (through {@code submit}).
     */
    public boolean holdDescriptorChecks(boolean hold) {
        leaderSession.holdDescriptorChecks(hold);
        return hold;
    }

    /**
     * For tests: while {@code hold}, this node, leading, does not tail its own queues (their last index, quorum with
     * no followers, lag), as if every excerpt completed just after the own tail looked; followers' tailers go on.
     * Duty thread (through {@code submit}).
     */
    public boolean holdOwnTail(boolean hold) {
        leaderSession.holdOwnTail(hold);
        return hold;
    }

    /** Why a queue is in its state (e.g. which excerpt is damaged); empty when there is nothing to say. */
    public String stateDetail(String queue) {
        QueueReplica q = queue(queue);
        return q.detail();
    }

    /** Follower: bytes of a large excerpt received in pieces and not yet stored (0: none). Duty-cycle thread. */
    public long bytesAssembling(String queue) {
        return queue(queue).partReceived;
    }

    private QueueReplica queue(String name) {
        for (QueueReplica q : queues == null ? new QueueReplica[0] : queues) {
            if (q.spec.name().equals(name)) {
                return q;
            }
        }
        throw new IllegalArgumentException("queue '" + name + "' is not hosted by node " + settings.nodeId());
    }
}
