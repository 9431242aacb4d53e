package io.queueenterprise.replication.config;

import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.engine.EngineSettings;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The node-configuration contract (schema version {@value #SCHEMA_VERSION}) between the operator and the node:
 * the operator renders exactly this document into a ConfigMap, the node reads it at start. Role and term are not
 * configuration: they come through the admin endpoint. Field-by-field meaning and the YAML spelling:
 * docs/node-config.md; examples: examples/node-config/. Values here are already validated.
 *
 * @param version            schema version of the document; {@value #SCHEMA_VERSION}
 * @param nodeId             this node's id; one of {@code peers}
 * @param dataDirectory      where queue directories live: {@code <dataDirectory>/<queue name>}
 * @param peers              every replica of the cluster, this node included, in a fixed order
 * @param peerCredentialFile the per-cluster peer credential (a Secret's file, not a data key): replicas prove
 *                           it when a session starts and authenticate state-changing frames with keys derived
 *                           from it
 * @param queues             the queues this node hosts; every replica hosts the same ones
 * @param admin              the admin endpoint (status, promote, follow, fence): authenticated callers only
 * @param metrics            Prometheus metrics, health and readiness; a port apart from admin
 * @param idleStrategy       how the node's one duty-cycle thread idles when there is no work
 * @param clientCredentialFile the per-cluster client credential (a Secret apart from data keys and the peer
 *                           credential) remote clients prove at connect; null: this node serves no remote clients
 * @param identityKeyFile    this node's own identity key (Ed25519 seed; a Secret of its own that no other node holds):
 *                           it signs this node's handshakes; every peer entry names the public key of its identity
 *                           (docs/replication.md, per-node identity)
 * @param authorisedClientsFile the remote clients this node takes, by name and identity public key (one
 *                           {@code <name> <public key>} per line; a ConfigMap's file), re-read when it changes:
 *                           a client removed is refused at its next CONNECT and its live sessions close. Null: any
 *                           client proving the client credential (no per-client identity). Needs clientCredentialFile
 * @param writeKeyDirectory  the queues' write-authorisation keys (derived one way from the master keys, no data key):
 *                           {@code <writeKeyDirectory>/<queue>.<key id>.key} (flat: one Secret holds them), 32 bytes (hex, base64 or raw) each, read
 *                           when an APPEND first names the key id; a remote APPEND whose write tag does not verify under
 *                           one is refused. Null: this node takes no remote APPEND (tails are served)
 * @param drawIdentityKeyIfAbsent with {@code identityKeyFile} set and that file absent, the node draws its identity key
 *                           into it (owner-only, created new) instead of refusing to start: the key then never leaves
 *                           the node's volume and the operator pins the public key the node reports
 *                           (docs/replication.md, per-node identity)
 * @param peerIdentitiesFile pins of peers' identity public keys ({@code <peerId> <public key>} per line; a ConfigMap's
 *                           file), re-read every second; a pin there applies to a peer whose entry has no
 *                           {@code identityKey}. Null: only the document's pins
 * @param leaseTimeout       how long a leader keeps acknowledging without hearing a majority at its term
 *                           (docs/replication.md "Leader lease"); zero: no lease (only the constructors that predate
 *                           the setting give that; the YAML reader defaults to
 *                           {@link EngineSettings#DEFAULT_LEASE_TIMEOUT})
 */
public record NodeConfig(int version, String nodeId, Path dataDirectory, List<Peer> peers, Path peerCredentialFile,
                         List<QueueSpec> queues, Admin admin, Metrics metrics, IdleStrategySpec idleStrategy,
                         Path clientCredentialFile, Path writeKeyDirectory, Path identityKeyFile,
                         Path authorisedClientsFile, Duration leaseTimeout, boolean drawIdentityKeyIfAbsent,
                         Path peerIdentitiesFile) {
    public static final int SCHEMA_VERSION = 1;

    /** Without a drawn identity key or a peer-identities file. */
    public NodeConfig(int version, String nodeId, Path dataDirectory, List<Peer> peers, Path peerCredentialFile,
                      List<QueueSpec> queues, Admin admin, Metrics metrics, IdleStrategySpec idleStrategy,
                      Path clientCredentialFile, Path writeKeyDirectory, Path identityKeyFile,
                      Path authorisedClientsFile, Duration leaseTimeout) {
        this(version, nodeId, dataDirectory, peers, peerCredentialFile, queues, admin, metrics, idleStrategy,
                clientCredentialFile, writeKeyDirectory, identityKeyFile, authorisedClientsFile, leaseTimeout, false, null);
    }

    public NodeConfig {
        peers = List.copyOf(peers);
        queues = List.copyOf(queues);
    }

    /** A node that serves no remote clients. */
    public NodeConfig(int version, String nodeId, Path dataDirectory, List<Peer> peers, Path peerCredentialFile,
                      List<QueueSpec> queues, Admin admin, Metrics metrics, IdleStrategySpec idleStrategy) {
        this(version, nodeId, dataDirectory, peers, peerCredentialFile, queues, admin, metrics, idleStrategy, null, null, null, null);
    }

    /** As before the lease existed: no lease ({@code leaseTimeout} zero). */
    public NodeConfig(int version, String nodeId, Path dataDirectory, List<Peer> peers, Path peerCredentialFile,
                      List<QueueSpec> queues, Admin admin, Metrics metrics, IdleStrategySpec idleStrategy,
                      Path clientCredentialFile, Path writeKeyDirectory, Path identityKeyFile, Path authorisedClientsFile) {
        this(version, nodeId, dataDirectory, peers, peerCredentialFile, queues, admin, metrics, idleStrategy,
                clientCredentialFile, writeKeyDirectory, identityKeyFile, authorisedClientsFile, Duration.ZERO);
    }

    /** The same document with another lease timeout. */
    public NodeConfig withLeaseTimeout(Duration timeout) {
        return new NodeConfig(version, nodeId, dataDirectory, peers, peerCredentialFile, queues, admin, metrics,
                idleStrategy, clientCredentialFile, writeKeyDirectory, identityKeyFile, authorisedClientsFile, timeout,
                drawIdentityKeyIfAbsent, peerIdentitiesFile);
    }

    /** A node that serves remote clients but holds no write key (it takes no remote APPEND). */
    public NodeConfig(int version, String nodeId, Path dataDirectory, List<Peer> peers, Path peerCredentialFile,
                      List<QueueSpec> queues, Admin admin, Metrics metrics, IdleStrategySpec idleStrategy,
                      Path clientCredentialFile) {
        this(version, nodeId, dataDirectory, peers, peerCredentialFile, queues, admin, metrics, idleStrategy,
                clientCredentialFile, null, null, null);
    }

    /** As the canonical constructor, without authorised clients (any client proving the client credential). */
    public NodeConfig(int version, String nodeId, Path dataDirectory, List<Peer> peers, Path peerCredentialFile,
                      List<QueueSpec> queues, Admin admin, Metrics metrics, IdleStrategySpec idleStrategy,
                      Path clientCredentialFile, Path writeKeyDirectory, Path identityKeyFile) {
        this(version, nodeId, dataDirectory, peers, peerCredentialFile, queues, admin, metrics, idleStrategy,
                clientCredentialFile, writeKeyDirectory, identityKeyFile, null);
    }

    /** This configuration with {@code file} as its authorised clients. */
    public NodeConfig withAuthorisedClientsFile(Path file) {
        return new NodeConfig(version, nodeId, dataDirectory, peers, peerCredentialFile, queues, admin, metrics, idleStrategy,
                clientCredentialFile, writeKeyDirectory, identityKeyFile, file, leaseTimeout, drawIdentityKeyIfAbsent,
                peerIdentitiesFile);
    }

    /** This configuration with {@code identityKeyFile} as the node's identity key. */
    public NodeConfig withIdentityKeyFile(Path identityKeyFile) {
        return new NodeConfig(version, nodeId, dataDirectory, peers, peerCredentialFile, queues, admin, metrics, idleStrategy,
                clientCredentialFile, writeKeyDirectory, identityKeyFile, authorisedClientsFile, leaseTimeout,
                drawIdentityKeyIfAbsent, peerIdentitiesFile);
    }

    /**
     * This configuration with {@code identityKeyFile}, drawn into when absent ({@code draw}), and {@code peerIdentitiesFile}
     * (null: none).
     */
    public NodeConfig withDrawnIdentity(Path identityKeyFile, boolean draw, Path peerIdentitiesFile) {
        return new NodeConfig(version, nodeId, dataDirectory, peers, peerCredentialFile, queues, admin, metrics, idleStrategy,
                clientCredentialFile, writeKeyDirectory, identityKeyFile, authorisedClientsFile, leaseTimeout, draw,
                peerIdentitiesFile);
    }

    /** Whether this node serves remote clients (a client credential is configured). */
    public boolean servesClients() {
        return clientCredentialFile != null;
    }

    /**
     * What the replication engine takes of this document: the node, its data directory, the peers and the queues
     * (the admin endpoint, metrics, retention and idle strategy stay with the shell).
     *
     * @throws EngineSettings.InvalidSettingException naming a field the engine cannot run with
     */
    public EngineSettings engineSettings() {
        EngineSettings.Builder b = EngineSettings.builder().nodeId(nodeId).dataDirectory(dataDirectory)
                .leaseTimeout(leaseTimeout == null ? Duration.ZERO : leaseTimeout);
        for (Peer p : peers) {
            b.peer(p.id(), p.host(), p.replicationPort(), p.clientPort());
        }
        for (QueueSpec q : queues) {
            b.queue(q.name(), q.rollCycle(), EngineSettings.Encryption.valueOf(q.encryption().name()), q.ackMode());
        }
        return b.build();
    }

    /** This node's own entry in {@link #peers()}. */
    public Peer self() {
        return peers.stream().filter(p -> p.id().equals(nodeId)).findFirst()
                .orElseThrow(() -> new IllegalStateException("nodeId " + nodeId + " is not among peers"));
    }

    /**
     * A replica of the cluster and where its replication endpoint listens (UDP, Aeron); {@code clientPort} is where
     * it takes remote clients (UDP, Aeron), 0 when it takes none. Nodes redirect clients to the leader's. {@code identityKey}
     * is the public key of its identity (Ed25519, base64 or hex of 32 bytes): its handshakes must be signed by it.
     */
    public record Peer(String id, String host, int replicationPort, int clientPort, String identityKey) {
        public Peer(String id, String host, int replicationPort) {
            this(id, host, replicationPort, 0, null);
        }

        public Peer(String id, String host, int replicationPort, int clientPort) {
            this(id, host, replicationPort, clientPort, null);
        }

        /** This peer with {@code identityKey} (the public key of its identity, base64 or hex). */
        public Peer withIdentityKey(String identityKey) {
            return new Peer(id, host, replicationPort, clientPort, identityKey);
        }
    }

    /**
     * One queue every replica hosts.
     *
     * @param rollCycle  a Chronicle roll cycle name (e.g. FAST_HOURLY, FAST_DAILY)
     * @param encryption what the queue's descriptor must say; the node holds no data key and never seals
     * @param ackTimeout how long a quorum-mode appender waits before a typed timeout error
     */
    public record QueueSpec(String name, String rollCycle, Encryption encryption, AckMode ackMode,
                            Duration ackTimeout, Retention retention) {
    }

    /** The cipher mode a hosted queue must have, or none. */
    public enum Encryption { NONE, AES_128_CTR, AES_128_CTR_POLY1305 }

    /** Cycle files older than {@code maxAge}, or beyond {@code maxBytes} in total, are deleted on every replica. */
    public record Retention(Optional<Duration> maxAge, Optional<Long> maxBytes) {
        public static Retention unbounded() {
            return new Retention(Optional.empty(), Optional.empty());
        }
    }

    /** The admin endpoint: HTTP on {@code port}, callers prove the token in {@code credentialFile}. */
    public record Admin(String bindAddress, int port, Path credentialFile) {
    }

    /** Prometheus metrics at /metrics, health at /healthz, readiness at /readyz. */
    public record Metrics(String bindAddress, int port) {
    }

    /** How the duty-cycle thread idles: the lowest latency (busy-spin) costs a whole core. */
    public enum IdleStrategySpec { BUSY_SPIN, YIELDING, BACKOFF, SLEEPING }
}
