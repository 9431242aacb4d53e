package io.queueenterprise.bench.subject;

import io.queueenterprise.replication.LoopbackPorts;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAcknowledgements;
import io.queueenterprise.queue.QueueAppender;
import net.openhft.chronicle.bytes.Bytes;
import io.queueenterprise.queue.QueueDescriptor;
import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.ReplicationNode;
import io.queueenterprise.replication.config.NodeConfig;
import io.queueenterprise.replication.engine.EngineSettings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Replication, leader append to follower-visible: two replication nodes in this process on UDP loopback (leader
 * {@code replica-0} at term 1, follower {@code replica-1}), each with its own embedded media driver driven by its
 * one duty-cycle thread. The producer appends with the library into the leader's queue (authenticated
 * encryption, the product's default); the consumer tails the FOLLOWER's queue with the library, so the latency
 * is append, the leader's tail, Aeron UDP, the follower's write at the same index, and the follower-side read.
 * In quorum mode the producer writes pipelined ({@link EnterpriseQueue#createPipelinedAppender()}): up to
 * {@value #WINDOW} writes not yet acknowledged by a majority (of two: both), waiting on the acknowledged index only
 * when the window is full; the follower's reader sees an excerpt only once it is acknowledged (replicated reads), so
 * the latency is still measured to acknowledgement. Compare with {@code peer-aeron-udp-rtt} from the same run.
 * Nodes busy-spin when the machine has cores for the four hot threads (producer, consumer, two nodes), else
 * they back off: the description of each result says which.
 */
public final class ReplicatedSubject implements Subject {

    /** One factory per acknowledgement mode. */
    public static final class Factory implements SubjectFactory {
        private final String name;
        private final AckMode ackMode;

        public Factory(String name, AckMode ackMode) {
            this.name = name;
            this.ackMode = ackMode;
        }

        @Override public String name() { return name; }
        @Override public String description() {
            return "queue-enterprise library (" + CipherMode.AES_128_CTR_POLY1305 + ") appending on a replication leader, read on its "
                    + "follower over Aeron UDP loopback, " + ackMode + " acks"
                    + (ackMode == AckMode.QUORUM ? " (pipelined, window " + WINDOW + ")" : "") + ", nodes " + idleStrategy();
        }
        @Override public Role role() { return Role.REPLICATED; }
        @Override public boolean persists() { return true; }
        @Override public Subject open(SubjectConfig config) throws IOException {
            return new ReplicatedSubject(config, ackMode);
        }
    }

    /** Quorum mode: writes in flight (not yet acknowledged) per producer; enough to cover a round trip at full rate. */
    public static final int WINDOW = 1024;
    private static final String QUEUE = "bench";
    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(10);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SubjectConfig config;
    private final AckMode ackMode;
    private final KeyRing ring;
    private final ReplicationNode leader;
    private final ReplicationNode follower;
    private final Path leaderQueueDir;
    private final Path followerQueueDir;
    private EnterpriseQueue leaderQueue; // opened with the subject: the descriptor exists before the follower connects
    private EnterpriseQueue followerQueue;

    /** Opens the two-node cluster in {@code config.runDir()} (what {@code qe ratios --replicated} measures too). */
    public static ReplicatedSubject open(SubjectConfig config, AckMode ackMode) throws IOException {
        return new ReplicatedSubject(config, ackMode);
    }

    ReplicatedSubject(SubjectConfig config, AckMode ackMode) throws IOException {
        this.config = config;
        this.ackMode = ackMode;
        Path root = config.runDir().resolve("cluster");
        Files.createDirectories(root);
        Path credential = root.resolve("peer-credential");
        writeOwnerOnly(credential, randomBytes(32));
        List<NodeConfig.Peer> peers = io.queueenterprise.replication.config.LocalIdentities.assign(List.of(
                new NodeConfig.Peer("replica-0", "127.0.0.1", LoopbackPorts.freeUdpPort()),
                new NodeConfig.Peer("replica-1", "127.0.0.1", LoopbackPorts.freeUdpPort())), root.resolve("identities"));
        NodeConfig.QueueSpec queue = new NodeConfig.QueueSpec(QUEUE, "FAST_DAILY", NodeConfig.Encryption.AES_128_CTR_POLY1305,
                ackMode, ACK_TIMEOUT, NodeConfig.Retention.unbounded());
        this.ring = KeyRing.single(MasterKey.of(1, randomBytes(32)));
        this.leaderQueueDir = root.resolve("replica-0").resolve(QUEUE);
        this.followerQueueDir = root.resolve("replica-1").resolve(QUEUE);
        ReplicationNode startedLeader = ReplicationNode.start(nodeConfig(root, "replica-0", peers, credential, queue));
        ReplicationNode startedFollower = null;
        try {
            startedLeader.promote(1);
            // The application creates the encrypted queue's descriptor on the leader before the follower's session
            // starts, so that the follower receives it with the session (it holds no key and cannot make one).
            EnterpriseQueue.Builder builder = EnterpriseQueue.builder(leaderQueueDir).encrypted(ring)
                    .cipherMode(CipherMode.AES_128_CTR_POLY1305);
            if (ackMode == AckMode.QUORUM) {
                builder.quorumAcks(ACK_TIMEOUT);
            }
            leaderQueue = builder.build();
            startedFollower = ReplicationNode.start(nodeConfig(root, "replica-1", peers, credential, queue));
            startedFollower.follow("replica-0", 1);
            awaitDescriptor(followerQueueDir.resolve(QueueDescriptor.FILE_NAME));
            awaitLease(startedLeader);
        } catch (RuntimeException e) {
            if (leaderQueue != null) {
                leaderQueue.close();
            }
            if (startedFollower != null) {
                startedFollower.close();
            }
            startedLeader.close();
            throw e;
        }
        this.leader = startedLeader;
        this.follower = startedFollower;
    }

    /** Waits until {@code leader} holds its lease (a majority heard at its term): it acknowledges only then. */
    public static void awaitLease(ReplicationNode leader) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!leader.status().lease().acknowledging()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the leader did not hold its lease within 30 s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    private static void awaitDescriptor(Path file) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.exists(file)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the follower did not receive the queue's descriptor in 30 s: " + file);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    private static NodeConfig nodeConfig(Path root, String id, List<NodeConfig.Peer> peers, Path credential,
                                         NodeConfig.QueueSpec queue) {
        return new NodeConfig(NodeConfig.SCHEMA_VERSION, id, root.resolve(id), peers, credential, List.of(queue),
                new NodeConfig.Admin("127.0.0.1", 0, root.resolve("admin-token")), new NodeConfig.Metrics("127.0.0.1", 0),
                idleStrategy()).withIdentityKeyFile(
                io.queueenterprise.replication.config.LocalIdentities.keyFile(root.resolve("identities"), id))
                .withLeaseTimeout(EngineSettings.DEFAULT_LEASE_TIMEOUT); // as a node read from YAML: the lease is on
    }

    /** Busy-spinning nodes need a core each beside the producer and the consumer. */
    private static NodeConfig.IdleStrategySpec idleStrategy() {
        return Runtime.getRuntime().availableProcessors() >= 6 ? NodeConfig.IdleStrategySpec.BUSY_SPIN
                : NodeConfig.IdleStrategySpec.BACKOFF;
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    private static void writeOwnerOnly(Path file, byte[] content) throws IOException {
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.write(file, content);
    }

    @Override
    public synchronized Producer producer() {
        return ackMode == AckMode.QUORUM ? pipelinedProducer() : LibrarySubject.producerOf(leaderQueue, config);
    }

    /** Writes without waiting while fewer than {@link #WINDOW} writes are unacknowledged; allocation-free. */
    private Producer pipelinedProducer() {
        QueueAppender appender = leaderQueue.createPipelinedAppender();
        QueueAcknowledgements acks = leaderQueue.acknowledgements();
        long[] window = new long[WINDOW];
        Bytes<?> message = Bytes.allocateDirect(config.messageSize());
        message.zeroOut(0, config.messageSize());
        message.writeSkip(config.messageSize());
        return new Producer() {
            private long written;

            @Override public void send(long intendedNanos) {
                int slot = (int) (written & (WINDOW - 1));
                if (written >= WINDOW) {
                    acks.awaitAcknowledged(window[slot], ACK_TIMEOUT); // the window is full: its oldest write
                }
                message.writeLong(0, intendedNanos);
                window[slot] = appender.write(message);
                written++;
            }

            @Override public void close() {
                appender.close();
                message.releaseLast();
            }
        };
    }

    @Override
    public synchronized Consumer consumer() {
        return LibrarySubject.consumerOf(followerQueue(), config);
    }

    /** The leader's queue, opened by the application (quorum acks asked for in quorum mode). */
    public EnterpriseQueue leaderQueue() {
        return leaderQueue;
    }

    /** The follower's copy, opened by a reader with the key (once; closed with the subject). */
    public synchronized EnterpriseQueue followerQueue() {
        if (followerQueue == null) {
            followerQueue = EnterpriseQueue.builder(followerQueueDir).encrypted(ring).cipherMode(CipherMode.AES_128_CTR_POLY1305).build();
        }
        return followerQueue;
    }

    @Override
    public synchronized void close() {
        try {
            if (leaderQueue != null) {
                leaderQueue.close();
            }
            if (followerQueue != null) {
                followerQueue.close();
            }
        } finally {
            try {
                follower.close();
            } finally {
                leader.close();
            }
        }
    }
}
