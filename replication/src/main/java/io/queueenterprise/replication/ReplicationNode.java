package io.queueenterprise.replication;

import io.queueenterprise.protocol.client.ClientCredential;
import io.queueenterprise.replication.client.ClientGateway;
import io.queueenterprise.replication.config.NodeConfig;
import io.queueenterprise.replication.engine.DurableFiles;
import io.queueenterprise.replication.engine.DropCounters;
import io.queueenterprise.replication.engine.ReplicationAgent;
import io.queueenterprise.replication.session.PeerCredential;
import io.queueenterprise.replication.session.PeerIdentities;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.StandardOpenOption;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A queue node's replication engine: ONE duty-cycle thread (an Agrona {@link AgentRunner} with the configured idle
 * strategy) that drives an embedded Aeron media driver in INVOKER mode and the Aeron client's conductor, ships raw
 * excerpts to followers (leader) or stores them at the same indexes (follower), and carries out the admin
 * endpoint's promote/follow/fence. Its Aeron directory is unique per node and deleted on close.
 *
 * <pre>{@code
 * try (ReplicationNode node = ReplicationNode.start(config)) {
 *     node.promote(1);                 // or node.follow("replica-0", 1)
 *     NodeStatus status = node.status();
 * }
 * }</pre>
 */
public final class ReplicationNode implements NodeControl {
    private static final long COMMAND_TIMEOUT_SECONDS = 30;
    /** How long promote and follow wait for every queue to take its new role (see awaitSettled). */
    private static final long SETTLE_WAIT_MILLIS = 3_000;
    /**
     * Start waits until every queue was tried once (on the node's opener thread): Chronicle can block for seconds
     * opening a queue (10 s for a lock on its metadata another process holds), and over 30 s were seen here in a
     * SIGKILL trial under load. The duty cycle runs meanwhile.
     */
    private static final long START_TIMEOUT_SECONDS = 120;

    private final NodeConfig config;
    private final ReplicationAgent agent;
    private final AgentRunner runner;
    private final Path aeronDirectory;
    private final PeerCredential credential;
    private final PeerIdentities identities;
    /** Re-reads the authorised clients while the node runs; null when it has none. */
    private volatile io.queueenterprise.replication.client.AuthorisedClientsWatcher clientsWatcher;
    /** Re-reads the peer-identities file while the node runs; null when it has none. */
    private volatile io.queueenterprise.replication.session.PeerIdentitiesWatcher pinsWatcher;
    private FileLock instanceLock;
    /** Set once start returned the node; until then a failed start is reported by start, not logged. */
    private volatile boolean started;
    /** Remote clients' door, driven by the agent's duty cycle; null when the node serves none. */
    private final ClientGateway clients;

    private static final String LOCK_FILE = "replication-node.lock";

    private ReplicationNode(NodeConfig config, PeerCredential credential, PeerIdentities identities, Path aeronDirectory) {
        this.config = config;
        this.credential = credential;
        this.identities = identities;
        this.aeronDirectory = aeronDirectory;
        this.clients = config.servesClients() ? new ClientGateway(config, loadClientCredential(config),
                config.authorisedClientsFile() == null ? null
                        : io.queueenterprise.replication.client.AuthorisedClientsWatcher.initial(config.authorisedClientsFile())) : null;
        this.agent = new ReplicationAgent(config.engineSettings(), credential, identities, aeronDirectory, clients);
        this.runner = new AgentRunner(idleStrategy(config.idleStrategy()), this::onAgentError, null, agent);
    }

    /**
     * Starts the node: opens every configured queue (creating directories as needed), restores the persisted term
     * and role, and starts the duty-cycle thread. Queues are opened on a thread of their own; this returns once the
     * duty cycle runs and every queue was tried once. A queue that could not be opened (its metadata locked by another
     * process, say) is retried in the background, reported STOPPED with the reason meanwhile, and joins when opened.
     *
     * @throws ReplicationException when the peer credential is unusable or the node cannot start
     */
    public static ReplicationNode start(NodeConfig config) {
        PeerCredential credential = PeerCredential.load(config.peerCredentialFile());
        PeerIdentities identities;
        try {
            identities = loadIdentities(config);
        } catch (RuntimeException e) {
            credential.close();
            throw e;
        }
        Path aeronDirectory;
        FileLock instanceLock;
        try {
            Files.createDirectories(config.dataDirectory());
            aeronDirectory = aeronDirectoryOf(config);
            instanceLock = lockDataDirectory(config.dataDirectory());
            if (instanceLock == null) {
                credential.close();
                identities.close();
                throw new ReplicationException("node " + config.nodeId() + " is already running with data directory "
                        + config.dataDirectory() + " (another process, or this one, holds " + LOCK_FILE + ")");
            }
            // Holding the lock, any Aeron directory of that name was left by a node killed outright (SIGKILL):
            // the driver deletes it on start (dirDeleteOnStart).
        } catch (IOException e) {
            credential.close();
            identities.close();
            // FileSystemException's message is "FILE: reason"; NoSuchFileException's is the file alone
            String reason = e instanceof java.nio.file.NoSuchFileException n ? n.getFile() + ": no such file or directory"
                    : e instanceof java.nio.file.AccessDeniedException a ? a.getFile() + ": permission denied" : e.getMessage();
            throw new ReplicationException("data directory " + config.dataDirectory() + " cannot be prepared: " + reason, e);
        }
        ReplicationNode node;
        try {
            node = new ReplicationNode(config, credential, identities, aeronDirectory);
        } catch (RuntimeException e) { // a bad client credential, say: nothing was started, what was taken is given back
            credential.close();
            identities.close();
            releaseQuietly(instanceLock);
            throw e;
        }
        node.instanceLock = instanceLock;
        if (config.peerIdentitiesFile() != null) { // read once before the duty cycle: its pins hold from the first handshake
            node.pinsWatcher = new io.queueenterprise.replication.session.PeerIdentitiesWatcher(config.peerIdentitiesFile(),
                    identities, config.peers().stream().map(NodeConfig.Peer::id).toList(),
                    config.peers().indexOf(config.self()), config.nodeId()).start();
        }
        if (node.clients != null && config.authorisedClientsFile() != null) {
            node.clientsWatcher = io.queueenterprise.replication.client.AuthorisedClientsWatcher.start(
                    config.authorisedClientsFile(), node.clients, config.nodeId());
        }
        AgentRunner.startOnThread(node.runner, r -> {
            Thread t = new Thread(r, "qe-replication-" + config.nodeId());
            t.setDaemon(true);
            return t;
        });
        try {
            node.awaitStarted(node.agent.submit(a -> Boolean.TRUE)); // onStart has run
            // Queues open off the duty thread (which drives the media driver meanwhile); start returns once each was
            // tried, so that a caller's first command sees every queue that could be opened.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
            while (!node.agent.queuesTriedOnce() && !node.runner.isClosed()) {
                if (System.nanoTime() > deadline) {
                    throw new TimeoutException("its queues were not opened within " + START_TIMEOUT_SECONDS + " s");
                }
                Thread.sleep(5);
            }
            node.awaitStarted(node.agent.submit(a -> Boolean.TRUE)); // and adopted them
        } catch (InterruptedException | ExecutionException | TimeoutException | RuntimeException e) {
            node.close(); // the driver, its Aeron directory, the credential and the data directory's lock
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            if (cause instanceof ReplicationException r) {
                throw r; // its sentence names what failed and where (a port in use, say)
            }
            throw new ReplicationException("node " + config.nodeId() + " did not start: " + cause, cause);
        }
        if (node.runner.isClosed() || node.agent.lastStatus() == null) {
            node.close();
            throw new ReplicationException("node " + config.nodeId() + " did not start (see the log)");
        }
        node.started = true;
        return node;
    }

    /**
     * Waits for a command submitted at start, but no longer than the duty cycle lives: when its start fails (a port
     * taken) the runner closes at once, and start reports why rather than waiting out {@link #START_TIMEOUT_SECONDS}.
     */
    private void awaitStarted(CompletableFuture<Boolean> started)
            throws InterruptedException, ExecutionException, TimeoutException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
        while (true) {
            RuntimeException failure = agent.startFailure();
            if (failure != null) {
                throw failure;
            }
            try {
                started.get(10, TimeUnit.MILLISECONDS);
                return;
            } catch (ExecutionException e) { // "node ... is closed": the start failure, if any, says why
                if (agent.startFailure() != null) {
                    throw agent.startFailure();
                }
                throw e;
            } catch (TimeoutException e) {
                if (runner.isClosed()) {
                    failure = agent.startFailure();
                    throw failure != null ? failure
                            : new ReplicationException("node " + config.nodeId() + " did not start: its duty cycle stopped (see the log)");
                }
                if (System.nanoTime() > deadline) {
                    throw new TimeoutException("its duty cycle did not start within " + START_TIMEOUT_SECONDS + " s");
                }
            }
        }
    }

    private static void releaseQuietly(FileLock lock) {
        try {
            lock.channel().close();
        } catch (IOException e) {
            // the process is failing its start anyway; the kernel drops the lock when it ends
        }
    }

    /**
     * The node's Aeron directory: one fixed name per data directory (in /dev/shm when there is one), so a node
     * restarted after being killed outright reuses and cleans the directory of its previous life instead of
     * leaving ~50 MiB of shared memory behind per crash (a second node on the same data directory is refused by
     * the data directory's lock, so the name is never shared by two live drivers).
     */
    static Path aeronDirectoryOf(NodeConfig config) {
        return aeronDirectoryOf(config.nodeId(), config.dataDirectory());
    }

    /**
     * Where node {@code nodeId} on {@code dataDirectory} keeps its media driver's files while it runs (removed when it
     * closes, or fails to start): for whoever checks that nothing was left behind.
     */
    public static Path aeronDirectoryOf(String nodeId, Path dataDirectory) {
        Path base = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        String data = dataDirectory.toAbsolutePath().normalize().toString();
        byte[] digest;
        try {
            digest = java.security.MessageDigest.getInstance("SHA-256").digest(data.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JDK", e);
        }
        return base.resolve("qe-aeron-" + nodeId + "-" + java.util.HexFormat.of().formatHex(digest, 0, 6));
    }

    /**
     * One node per data directory, for as long as the process lives: an exclusive lock the kernel drops when the
     * process dies, however it dies. Null when another node (in any process) holds it.
     */
    /**
     * Removes the Aeron directory (tens of MiB of shared memory) that node {@code nodeId} on {@code dataDirectory}
     * left when it was killed outright; a node that closes removes its own, a restarted one reuses it. Does nothing
     * while a node runs on that data directory (its lock is held). For whoever starts and kills nodes: tests, the demo.
     */
    public static void removeLeftAeronDirectory(String nodeId, Path dataDirectory) {
        try {
            FileLock lock = lockDataDirectory(dataDirectory);
            if (lock == null) {
                return;
            }
            try {
                DurableFiles.deleteTree(aeronDirectoryOf(nodeId, dataDirectory));
            } finally {
                lock.channel().close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the Aeron directory node " + nodeId + " left", e);
        }
    }

    private static FileLock lockDataDirectory(Path dataDirectory) throws IOException {
        if (!Files.isDirectory(dataDirectory)) {
            return null;
        }
        FileChannel channel = FileChannel.open(dataDirectory.resolve(LOCK_FILE), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
        try {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                channel.close();
            }
            return lock;
        } catch (OverlappingFileLockException e) { // held by another node in this JVM
            channel.close();
            return null;
        }
    }

    private void onAgentError(Throwable t) {
        if (!started && t == agent.startFailure()) {
            return; // start() throws it, in one sentence: no stack trace besides
        }
        LoggerFactory.getLogger(ReplicationNode.class).error("node " + config.nodeId() + ": duty cycle error", t);
    }

    static IdleStrategy idleStrategy(NodeConfig.IdleStrategySpec spec) {
        return switch (spec) {
            case BUSY_SPIN -> new BusySpinIdleStrategy();
            case YIELDING -> new YieldingIdleStrategy();
            case BACKOFF -> new BackoffIdleStrategy(10, 20, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MICROSECONDS.toNanos(100));
            case SLEEPING -> new SleepingMillisIdleStrategy(1);
        };
    }

    public NodeConfig config() {
        return config;
    }

    /** Frames dropped per reason (malformed, unauthenticated, bad MAC, stale term, ...), for metrics. */
    public DropCounters drops() {
        return agent.drops();
    }

    /** Sessions closed since start because their peer's identity pin changed to a key they had not proved. Any thread. */
    @Override
    public long identitySessionsClosed() {
        return agent.identitySessionsClosed();
    }

    /** Contents of the peer-identities file refused whole since start (malformed); 0 without such a file. Any thread. */
    @Override
    public long peerIdentitiesRefusals() {
        io.queueenterprise.replication.session.PeerIdentitiesWatcher w = pinsWatcher;
        return w == null ? 0 : w.refusals();
    }

    /** Peer sessions established since start (each completed handshake adds one). Any thread. */
    public long sessionsEstablished() {
        return agent.sessionsEstablished();
    }

    private <T> T call(Function<ReplicationAgent, T> action) {
        CompletableFuture<T> result = agent.submit(action);
        try {
            return result.get(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new ReplicationException("node " + config.nodeId() + ": " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ReplicationException("interrupted waiting for node " + config.nodeId(), e);
        } catch (TimeoutException e) {
            throw new ReplicationException("node " + config.nodeId() + " did not answer within " + COMMAND_TIMEOUT_SECONDS + " s", e);
        }
    }

    @Override
    public NodeStatus status() {
        if (runner.isClosed()) {
            return agent.lastStatus();
        }
        return call(ReplicationAgent::buildStatus);
    }

    @Override
    public void promote(long term) {
        call(a -> a.promote(term));
        awaitSettled();
    }

    @Override
    public void follow(String leaderNodeId, long term) {
        call(a -> a.follow(leaderNodeId, term));
        awaitSettled();
    }

    /**
     * After a role change each queue's writer finds the queue's last index off the duty thread; the caller (the
     * operator, a test) is answered once every queue took its new role, or after {@link #SETTLE_WAIT_MILLIS} with a
     * queue still blocked in its store (it reports STOPPED with the reason, and takes its role when it can).
     */
    private void awaitSettled() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_WAIT_MILLIS);
        while (!call(ReplicationAgent::settled) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public void fence(long term) {
        call(a -> a.fence(term));
    }

    @Override
    public String transportProblem() {
        return agent.transportProblem();
    }

    @Override
    public long transportRestarts() {
        return agent.transportRestarts();
    }

    @Override
    public java.util.Map<String, String> unresolvedPeers() {
        return agent.unresolvedPeers();
    }

    /** Test hook: the embedded Aeron client closes, as when its conductor fails; the node must notice and recover. */
    void closeAeronClientForTest() {
        call(a -> {
            a.closeAeronClientForTest();
            return Boolean.TRUE;
        });
    }

    /**
     * Test hook: the embedded Aeron client and driver close, and {@code whileDown} runs on the duty thread before the
     * node notices (a test takes the node's UDP port there, so that its restart fails until the port is free again).
     */
    void closeTransportForTest(Runnable whileDown) {
        call(a -> {
            a.closeTransportForTest(whileDown);
            return Boolean.TRUE;
        });
    }

    @Override
    public Histogram ackLatencySinceLastCall(String queue) {
        return agent.ackLatencySinceLastCall(queue);
    }

    /** The remote-client gateway (counters for metrics and tests), or null when this node serves no clients. */
    public ClientGateway clientGateway() {
        return clients;
    }

    /**
     * The replication frames dropped, by reason and frame type and by reason and peer (the replica named by its node id),
     * the cells that are not zero: for the metrics ({@code qe_node_frames_dropped_by_type_total},
     * {@code qe_node_frames_dropped_by_peer_total}). Any thread.
     */
    public java.util.List<io.queueenterprise.replication.node.DroppedFrames> droppedFrames() {
        java.util.List<io.queueenterprise.replication.node.DroppedFrames> cells = new java.util.ArrayList<>();
        DropCounters drops = agent.drops();
        for (io.queueenterprise.replication.engine.DropReason reason : io.queueenterprise.replication.engine.DropReason.values()) {
            long untyped = drops.get(reason, null);
            if (untyped != 0) {
                cells.add(io.queueenterprise.replication.node.DroppedFrames.byType(reason.name(), "UNREADABLE", untyped));
            }
            for (io.queueenterprise.replication.wire.FrameType type : io.queueenterprise.replication.wire.FrameType.values()) {
                long n = drops.get(reason, type);
                if (n != 0) {
                    cells.add(io.queueenterprise.replication.node.DroppedFrames.byType(reason.name(), type.name(), n));
                }
            }
            for (int p = 0; p < config.peers().size(); p++) {
                long n = drops.getByPeer(reason, p);
                if (n != 0) {
                    cells.add(io.queueenterprise.replication.node.DroppedFrames.byPeer(reason.name(), config.peers().get(p).id(), n));
                }
            }
        }
        if (clients != null) {
            io.queueenterprise.replication.client.ClientDrop[] reasons = io.queueenterprise.replication.client.ClientDrop.values();
            clients.dropsByClient().forEach((client, counts) -> {
                for (int r = 0; r < counts.length; r++) {
                    if (counts[r] != 0) {
                        cells.add(io.queueenterprise.replication.node.DroppedFrames.byClient(reasons[r].name(), client, counts[r]));
                    }
                }
            });
        }
        return cells;
    }

    /** The client gateway's dropped-frame counters, keyed {@code client_<reason>}; empty when it serves no clients. */
    public java.util.Map<String, Long> clientFramesDroppedByReason() {
        java.util.Map<String, Long> counts = new java.util.LinkedHashMap<>();
        if (clients != null) {
            for (io.queueenterprise.replication.client.ClientDrop reason : io.queueenterprise.replication.client.ClientDrop.values()) {
                counts.put("client_" + reason.name(), clients.drops(reason));
            }
        }
        return counts;
    }

    /**
     * This node's identity key and every replica's public key, as the configuration pins them. A peer left unpinned is
     * authenticated by the peer credential alone (said here, once, naming it).
     */
    private static PeerIdentities loadIdentities(NodeConfig config) {
        java.util.List<byte[]> keys = new java.util.ArrayList<>();
        java.util.List<String> unpinned = new java.util.ArrayList<>();
        int self = -1;
        for (int i = 0; i < config.peers().size(); i++) {
            NodeConfig.Peer p = config.peers().get(i);
            if (p.id().equals(config.nodeId())) {
                self = i;
            }
            if (p.identityKey() == null) {
                keys.add(null);
                if (!p.id().equals(config.nodeId())) {
                    unpinned.add(p.id());
                }
                continue;
            }
            try {
                keys.add(io.queueenterprise.crypto.IdentityKey.parsePublicKey(p.identityKey()));
            } catch (IllegalArgumentException e) {
                throw new ReplicationException("peers[" + i + "].identityKey " + e.getMessage());
            }
        }
        if (!unpinned.isEmpty() && config.peerIdentitiesFile() == null) {
            org.slf4j.LoggerFactory.getLogger(ReplicationNode.class).warn(config.nodeId() + ": no identityKey pinned for "
                    + unpinned + ": any holder of the peer credential can speak as "
                    + (unpinned.size() == 1 ? "it" : "them") + " (docs/replication.md, per-node identity)");
        }
        return PeerIdentities.load(config.identityKeyFile(), config.drawIdentityKeyIfAbsent(), keys, self, config.nodeId());
    }

    private static ClientCredential loadClientCredential(NodeConfig config) {
        try {
            return ClientCredential.load(config.clientCredentialFile());
        } catch (ClientCredential.ClientCredentialException e) {
            throw new ReplicationException("clientCredentialFile: " + e.getMessage());
        }
    }

    /**
     * Why a queue is in its state, e.g. which stored excerpt no longer matches its checksum when the state is
     * CORRUPTED; empty when there is nothing to say.
     */
    public String stateDetail(String queue) {
        return call(a -> a.stateDetail(queue));
    }

    /**
     * For tests (DescriptorDeliveryTest): while {@code hold}, this node, leading, skips its periodic look at the
     * queues' descriptor files, so that a race with that look is decided by the test, not by the machine's load.
     */
    void holdDescriptorChecks(boolean hold) {
        call(a -> a.holdDescriptorChecks(hold));
    }

    /** For tests (DescriptorDeliveryTest): while {@code hold}, this node, leading, does not tail its own queues. */
    void holdOwnTail(boolean hold) {
        call(a -> a.holdOwnTail(hold));
    }

    /**
     * Bytes of an excerpt too large for one DATA batch that this follower has received in pieces and not yet
     * stored (0 when none): a replica stores such an excerpt only whole. For diagnostics and tests.
     */
    public long bytesAssembling(String queue) {
        return call(a -> a.bytesAssembling(queue));
    }

    @Override
    public void close() {
        if (clientsWatcher != null) {
            clientsWatcher.close();
        }
        if (pinsWatcher != null) {
            pinsWatcher.close();
        }
        runner.close(); // runs onClose on the duty-cycle thread: stores closed, Aeron and the driver closed
        credential.close();
        identities.close();
        try {
            DurableFiles.deleteTree(aeronDirectory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the node's Aeron directory " + aeronDirectory, e);
        }
        if (instanceLock != null) {
            try {
                instanceLock.channel().close(); // releases the lock: the data directory is free for the next node
            } catch (IOException e) {
                throw new UncheckedIOException("cannot release " + LOCK_FILE + " of node " + config.nodeId(), e);
            }
        }
    }
}
