package io.queueenterprise.bench.subject;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.protocol.client.TailMode;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueDescriptor;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteTailer;
import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.LoopbackPorts;
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
 * Remote append ({@code remote-append-*}) and remote tail ({@code remote-tail}).
 *
 * <p>Remote append: a {@link RemoteQueue} client (its own embedded media driver, driven by the producer thread) seals
 * each message and appends it over Aeron UDP loopback to a replication leader in this process, which replicates to
 * its follower; the consumer tails the FOLLOWER's queue with the library. So the latency is client seal, client →
 * leader, the leader's append, leader → follower, the follower's write and read. The producer writes with
 * {@code RemoteAppender.writeAsync}: up to the client's window (default 1,024 appends or 1 MiB) in flight, acknowledged
 * by the leader's coalesced acks (in quorum mode once the follower holds them); a full window makes the producer wait
 * (producer lateness: "rate not kept"). Compare with {@code peer-aeron-udp-rtt} and {@code replicated-*} from the same run.
 *
 * <p>Remote tail: the producer appends with the library on the LEADER's queue; the consumer is a {@link RemoteTailer}
 * (its own embedded media driver, driven by the consumer thread) served by the FOLLOWER over Aeron UDP loopback,
 * opening each envelope with the client's key. So the latency is the leader's seal and append, leader → follower,
 * the follower's write, its tail's read (bounded work per duty cycle), follower → client, the client's open.
 */
public final class RemoteAppendSubject implements Subject {

    /** One factory per acknowledgement mode. */
    public static final class Factory implements SubjectFactory {
        private final String name;
        private final AckMode ackMode;
        private final boolean remoteTail;

        /** {@code remoteTail}: the library appends on the leader and a remote tailer reads from the follower. */
        public Factory(String name, AckMode ackMode, boolean remoteTail) {
            this.name = name;
            this.ackMode = ackMode;
            this.remoteTail = remoteTail;
        }

        @Override public String name() { return name; }
        @Override public String description() {
            if (remoteTail) {
                return "library appending (" + CipherMode.AES_128_CTR_POLY1305 + ") on a replication leader, read by a remote"
                        + " tailer served by its follower over Aeron UDP loopback, " + ackMode + " acks, nodes BACKOFF";
            }
            return "remote client (" + CipherMode.AES_128_CTR_POLY1305 + ", one write in flight) appending over Aeron UDP loopback "
                    + "to a replication leader, read on its follower, " + ackMode + " acks, nodes BACKOFF";
        }
        @Override public Role role() { return Role.REPLICATED; }
        @Override public boolean persists() { return true; }
        @Override public Subject open(SubjectConfig config) throws IOException {
            return new RemoteAppendSubject(config, ackMode, remoteTail);
        }
    }

    private static final String QUEUE = "bench";
    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(10);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SubjectConfig config;
    private final KeyRing ring;
    private final Path clientCredential;
    private final Path writeKeyDirectory;
    private final List<NodeConfig.Peer> peers;
    private final ReplicationNode leader;
    private final ReplicationNode follower;
    private final Path leaderQueueDir;
    private final Path followerQueueDir;
    private final AckMode ackMode;
    private final boolean remoteTail;
    private EnterpriseQueue followerQueue;
    private EnterpriseQueue leaderQueue;

    RemoteAppendSubject(SubjectConfig config, AckMode ackMode, boolean remoteTail) throws IOException {
        this.config = config;
        this.ackMode = ackMode;
        this.remoteTail = remoteTail;
        Path root = config.runDir().resolve("cluster");
        Files.createDirectories(root);
        Path credential = root.resolve("peer-credential");
        writeOwnerOnly(credential, randomBytes(32));
        clientCredential = root.resolve("client-credential");
        writeOwnerOnly(clientCredential, randomBytes(32));
        peers = io.queueenterprise.replication.config.LocalIdentities.assign(List.of(
                new NodeConfig.Peer("replica-0", "127.0.0.1", LoopbackPorts.freeUdpPort(), LoopbackPorts.freeUdpPort()),
                new NodeConfig.Peer("replica-1", "127.0.0.1", LoopbackPorts.freeUdpPort(), LoopbackPorts.freeUdpPort())),
                root.resolve("identities"));
        NodeConfig.QueueSpec queue = new NodeConfig.QueueSpec(QUEUE, "FAST_DAILY", NodeConfig.Encryption.AES_128_CTR_POLY1305,
                ackMode, ACK_TIMEOUT, NodeConfig.Retention.unbounded());
        this.ring = KeyRing.single(MasterKey.of(1, randomBytes(32)));
        // the nodes' write key (derived one way from the master key): remote APPENDs must carry a tag under it
        writeKeyDirectory = root.resolve("write-keys");
        Files.createDirectories(writeKeyDirectory);
        writeOwnerOnly(writeKeyDirectory.resolve(QUEUE + ".1.key"), io.queueenterprise.crypto.WriteKeys.derive(ring.key(1), QUEUE));
        this.leaderQueueDir = root.resolve("replica-0").resolve(QUEUE);
        this.followerQueueDir = root.resolve("replica-1").resolve(QUEUE);
        ReplicationNode startedLeader = ReplicationNode.start(nodeConfig(root, "replica-0", credential, queue));
        ReplicationNode startedFollower = null;
        try {
            startedLeader.promote(1);
            // A key holder creates the queue's descriptor (recording the key) with one local write: a remote writer
            // cannot (the node holds no key to authenticate a descriptor).
            EnterpriseQueue.Builder builder = leaderQueueBuilder();
            startedFollower = ReplicationNode.start(nodeConfig(root, "replica-1", credential, queue));
            startedFollower.follow("replica-0", 1);
            // with the lease on (as every node read from YAML) the leader takes a write only once a majority heard it
            ReplicatedSubject.awaitLease(startedLeader);
            try (EnterpriseQueue leaderQueue = builder.build(); QueueAppender appender = leaderQueue.createAppender()) {
                appender.write(new byte[config.messageSize()]); // intended time 0: the consumer skips it
            }
            awaitDescriptor(followerQueueDir.resolve(QueueDescriptor.FILE_NAME));
        } catch (RuntimeException e) {
            if (startedFollower != null) {
                startedFollower.close();
            }
            startedLeader.close();
            throw e;
        }
        this.leader = startedLeader;
        this.follower = startedFollower;
    }

    /**
     * Opens the two-node cluster serving remote clients in {@code config.runDir()} (what {@code qe ratios --replicated}
     * measures too: its {@code remote-append-*} subjects write through {@link #newClient}).
     */
    public static RemoteAppendSubject open(SubjectConfig config, AckMode ackMode) throws IOException {
        return new RemoteAppendSubject(config, ackMode, false);
    }

    /**
     * A remote client of this cluster, with the default window and {@code sendBatching} (null: the client's default,
     * adaptive; zero: each write sent at once): built on, and driven by, the calling thread.
     */
    public RemoteQueue newClient(Duration sendBatching) {
        RemoteQueue.Builder builder = RemoteQueue.builder(clientAddresses()).queue(QUEUE).clientCredential(clientCredential)
                .keyRing(ring).ackTimeout(ACK_TIMEOUT);
        return (sendBatching == null ? builder : builder.sendBatching(sendBatching)).build();
    }

    /**
     * How the leader took this cluster's remote appends so far: appends, and the APPEND_BATCH frames with their entries
     * (what a client's {@code sendBatching} changes).
     */
    public String leaderIntake() {
        io.queueenterprise.replication.client.ClientGateway gateway = leader.clientGateway();
        long frames = gateway.batchFrames();
        long entries = gateway.batchEntries();
        return String.format("the leader appended %,d; %,d APPEND_BATCH frames carried %,d (%.1f per frame)",
                gateway.appended(), frames, entries, frames == 0 ? 0.0 : (double) entries / frames);
    }

    private EnterpriseQueue.Builder leaderQueueBuilder() {
        EnterpriseQueue.Builder builder = EnterpriseQueue.builder(leaderQueueDir).encrypted(ring)
                .cipherMode(CipherMode.AES_128_CTR_POLY1305);
        if (ackMode == AckMode.QUORUM) {
            builder.quorumAcks(ACK_TIMEOUT);
        }
        return builder;
    }

    private List<String> clientAddresses() {
        return peers.stream().map(p -> p.host() + ":" + p.clientPort()).toList();
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

    private NodeConfig nodeConfig(Path root, String id, Path credential, NodeConfig.QueueSpec queue) {
        return new NodeConfig(NodeConfig.SCHEMA_VERSION, id, root.resolve(id), peers, credential, List.of(queue),
                new NodeConfig.Admin("127.0.0.1", 0, root.resolve("admin-token")), new NodeConfig.Metrics("127.0.0.1", 0),
                NodeConfig.IdleStrategySpec.BACKOFF, clientCredential, writeKeyDirectory,
                io.queueenterprise.replication.config.LocalIdentities.keyFile(root.resolve("identities"), id))
                .withLeaseTimeout(EngineSettings.DEFAULT_LEASE_TIMEOUT); // as a node read from YAML: the lease is on
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
        if (remoteTail) {
            leaderQueue = leaderQueueBuilder().build();
            return LibrarySubject.producerOf(leaderQueue, config);
        }
        // built on the producer thread: the client is driven by the thread that writes
        RemoteQueue remote = newClient(null); // the client's default (adaptive send batching), as an application gets it
        // pipelined: writeAsync keeps up to the window in flight; the latency is read where the consumer reads
        io.queueenterprise.remote.RemoteAppender appender = remote.createAppender(new io.queueenterprise.remote.AppendListener() {
            @Override public void onAcknowledged(long correlation, long index) {
            }

            @Override public void onFailed(long correlation, io.queueenterprise.remote.RemoteQueueException failure) {
                throw failure;
            }
        });
        byte[] message = new byte[config.messageSize()];
        // the time in the order the library consumer's Bytes.readLong reads it (native)
        java.nio.ByteBuffer time = java.nio.ByteBuffer.wrap(message).order(java.nio.ByteOrder.nativeOrder());
        return new Producer() {
            @Override public void send(long intendedNanos) {
                time.putLong(0, intendedNanos);
                appender.writeAsync(message, 0, message.length, intendedNanos);
            }

            @Override public void close() {
                appender.close();
                remote.close();
            }
        };
    }

    @Override
    public synchronized Consumer consumer() {
        Consumer library;
        if (remoteTail) {
            // built on the consumer thread: the tailer is driven by the thread that reads; served by the follower
            RemoteQueue remote = RemoteQueue.builder(clientAddresses()).queue(QUEUE).clientCredential(clientCredential)
                    .keyRing(ring).build();
            RemoteTailer tailer = remote.createTailer(TailMode.ALL, clientAddresses().get(1));
            Consumer reading = LibrarySubject.consumerOf(tailer, config);
            library = new Consumer() {
                @Override public long poll() {
                    return reading.poll();
                }

                @Override public void close() {
                    reading.close();
                    remote.close();
                }
            };
        } else {
            followerQueue = EnterpriseQueue.builder(followerQueueDir).encrypted(ring).cipherMode(CipherMode.AES_128_CTR_POLY1305).build();
            library = LibrarySubject.consumerOf(followerQueue, config);
        }
        return new Consumer() {
            @Override public long poll() {
                long intended = library.poll();
                return intended == 0 ? NONE : intended; // 0: the local write that created the queue
            }

            @Override public void close() {
                library.close();
            }
        };
    }

    @Override
    public synchronized void close() {
        try {
            if (followerQueue != null) {
                followerQueue.close();
            }
            if (leaderQueue != null) {
                leaderQueue.close();
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
