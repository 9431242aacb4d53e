package io.queueenterprise.replication;

import io.queueenterprise.replication.config.NodeConfig;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/** Configurations for a cluster of nodes on UDP loopback with free ports, under one temporary directory. */
final class TestCluster {
    final Path root;
    final Path credential;
    final List<NodeConfig.Peer> peers = new ArrayList<>();
    final List<NodeConfig.QueueSpec> queues;
    /** The nodes' leader lease; zero (no lease) unless {@link #leaseTimeout(Duration)} set one. */
    Duration leaseTimeout = Duration.ZERO;
    /** The client credential when {@link #serveClients()} was called; null: nodes serve no remote clients. */
    Path clientCredential;

    TestCluster(Path root, int size, List<NodeConfig.QueueSpec> queues) throws IOException {
        this.root = root;
        this.queues = queues;
        Files.createDirectories(root);
        this.credential = root.resolve("peer-credential");
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        Files.write(credential, secret);
        SecureRandom random = new SecureRandom();
        for (int i = 0; i < size; i++) {
            try (io.queueenterprise.crypto.IdentityKey identity = io.queueenterprise.crypto.IdentityKey.generate(random)) {
                Files.writeString(identityKeyFile(i), identity.seedHex());
                peers.add(new NodeConfig.Peer("replica-" + i, "127.0.0.1", LoopbackPorts.freeUdpPort(), 0,
                        identity.publicKeyText()));
            }
        }
    }

    /** Node {@code node}'s own identity key (Ed25519 seed, hex): {@code <root>/identity-<node>.key}. */
    Path identityKeyFile(int node) {
        return root.resolve("identity-" + node + ".key");
    }

    /** Every node takes remote clients on a free loopback port, under a fresh client credential. */
    TestCluster serveClients() throws IOException {
        clientCredential = root.resolve("client-credential");
        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        Files.write(clientCredential, secret);
        writeKeyDirectory = Files.createDirectories(root.resolve(WRITE_KEYS));
        for (int i = 0; i < peers.size(); i++) {
            NodeConfig.Peer p = peers.get(i);
            peers.set(i, new NodeConfig.Peer(p.id(), p.host(), p.replicationPort(), LoopbackPorts.freeUdpPort(), p.identityKey()));
        }
        return this;
    }

    /** Every node holds a leader lease of {@code timeout} (docs/replication.md "Leader lease"). */
    TestCluster leaseTimeout(Duration timeout) {
        leaseTimeout = timeout;
        return this;
    }

    /** host:port of every node's client endpoint. */
    List<String> clientAddresses() {
        return peers.stream().map(p -> p.host() + ":" + p.clientPort()).toList();
    }

    static NodeConfig.QueueSpec queue(String name, AckMode mode) {
        return new NodeConfig.QueueSpec(name, "FAST_DAILY", NodeConfig.Encryption.NONE, mode, Duration.ofSeconds(5),
                NodeConfig.Retention.unbounded());
    }

    /** A queue whose excerpts are sealed (AES-128-CTR + Poly1305) by the key holders that write it. */
    static NodeConfig.QueueSpec sealedQueue(String name, AckMode mode) {
        return new NodeConfig.QueueSpec(name, "FAST_DAILY", NodeConfig.Encryption.AES_128_CTR_POLY1305, mode,
                Duration.ofSeconds(5), NodeConfig.Retention.unbounded());
    }

    /** Every node of the cluster started in this JVM, in standby; those started are closed again if one fails. */
    ReplicationNode[] startNodes() {
        ReplicationNode[] nodes = new ReplicationNode[peers.size()];
        try {
            for (int i = 0; i < nodes.length; i++) {
                nodes[i] = ReplicationNode.start(config(i));
            }
            return nodes;
        } catch (RuntimeException | Error e) {
            closeAll(nodes);
            throw e;
        }
    }

    /** Closes every node not null (a test may have closed and cleared one itself). */
    static void closeAll(ReplicationNode[] nodes) {
        for (ReplicationNode node : nodes) {
            if (node != null) {
                node.close();
            }
        }
    }

    NodeConfig config(int node) {
        return config(node, credential);
    }

    NodeConfig config(int node, Path credentialFile) {
        return config(node, credentialFile, identityKeyFile(node));
    }

    /** Node {@code node} with {@code identityKeyFile} as its identity key (another node's, in attack tests). */
    NodeConfig config(int node, Path credentialFile, Path identityKeyFile) {
        return new NodeConfig(NodeConfig.SCHEMA_VERSION, "replica-" + node, dataDirectory(node), peers, credentialFile, queues,
                new NodeConfig.Admin("127.0.0.1", 0, root.resolve("admin-token")), new NodeConfig.Metrics("127.0.0.1", 0),
                NodeConfig.IdleStrategySpec.BACKOFF, clientCredential, writeKeyDirectory, identityKeyFile, null, leaseTimeout);
    }

    /** Where the nodes find the queues' write keys when they serve clients: {@code <root>/write-keys}. */
    static final String WRITE_KEYS = "write-keys";
    Path writeKeyDirectory;

    /**
     * As the operator does for a key holder: gives the nodes {@code queue}'s write key of every master key in
     * {@code ring} (derived one way; no data key), when the cluster whose queue directory is {@code queueDir} serves
     * clients ({@code <root>/node-i/<queue>}).
     */
    static void authoriseWriters(Path queueDir, String queue, io.queueenterprise.crypto.KeyRing ring) {
        Path directory = queueDir.toAbsolutePath().getParent().getParent().resolve(WRITE_KEYS);
        if (!Files.isDirectory(directory)) {
            return;
        }
        try {
            for (int id : ring.keyIds()) {
                byte[] key = io.queueenterprise.crypto.WriteKeys.derive(ring.key(id), queue);
                Files.writeString(directory.resolve(queue + "." + id + ".key"), java.util.HexFormat.of().formatHex(key));
                java.util.Arrays.fill(key, (byte) 0);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    Path dataDirectory(int node) {
        return root.resolve("node-" + node);
    }

    Path queueDirectory(int node, String queue) {
        return dataDirectory(node).resolve(queue);
    }

    /** Waits until {@code condition} holds, at most {@code timeout}; false if it never did. */
    static boolean await(Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(10);
        }
        return condition.getAsBoolean();
    }
}
