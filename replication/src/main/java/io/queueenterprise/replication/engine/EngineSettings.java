package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.HelloBody;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What the replication engine is told at start: this node, its data directory, every replica and every hosted queue.
 * Immutable; built and checked by {@link #builder()}. The node shell maps its YAML document
 * ({@code config.NodeConfig}) to this, so the engine knows nothing of the document's schema (admin, metrics,
 * retention are the shell's).
 */
public final class EngineSettings {
    private final String nodeId;
    private final Path dataDirectory;
    private final List<Peer> peers;
    private final List<QueueSettings> queues;
    private final int self;
    private final java.time.Duration leaseTimeout;

    /** The lease a leader holds while a majority answers at its term: docs/replication.md "Leader lease". */
    public static final java.time.Duration DEFAULT_LEASE_TIMEOUT = java.time.Duration.ofSeconds(2);

    private EngineSettings(Builder b) {
        this.leaseTimeout = b.leaseTimeout;
        this.nodeId = b.nodeId;
        this.dataDirectory = b.dataDirectory;
        this.peers = List.copyOf(b.peers);
        this.queues = List.copyOf(b.queues);
        int me = -1;
        for (int i = 0; i < peers.size(); i++) {
            if (peers.get(i).id().equals(nodeId)) {
                me = i;
            }
        }
        this.self = me;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * How long a follower's echo of this leader's clock keeps the lease (docs/replication.md "Leader lease"); a leader
     * that has not heard a majority at its term within it acknowledges nothing. Zero: no lease (embedded tests and
     * benchmarks built before the setting existed; a node read from YAML always has one).
     */
    public java.time.Duration leaseTimeout() {
        return leaseTimeout;
    }

    /** This node's id; one of {@link #peers()}. */
    public String nodeId() {
        return nodeId;
    }

    /** Where queue directories live ({@code <dataDirectory>/<queue name>}) and the node's state file. */
    public Path dataDirectory() {
        return dataDirectory;
    }

    /** Every replica of the cluster, this node included, in a fixed order (positions are carried in frames). */
    public List<Peer> peers() {
        return peers;
    }

    /** The queues this node hosts; every replica hosts the same ones, in the same order. */
    public List<QueueSettings> queues() {
        return queues;
    }

    /** This node's position in {@link #peers()}. */
    public int selfPosition() {
        return self;
    }

    /** This node's own entry in {@link #peers()}. */
    public Peer self() {
        return peers.get(self);
    }

    /** The position of the peer with this id in {@link #peers()}, or -1. */
    public int peerPosition(String id) {
        for (int i = 0; i < peers.size(); i++) {
            if (peers.get(i).id().equals(id)) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public String toString() {
        return "EngineSettings[nodeId=" + nodeId + ", dataDirectory=" + dataDirectory + ", peers=" + peers
                + ", queues=" + queues + "]";
    }

    /**
     * A replica and where it listens: {@code replicationPort} for peers, {@code clientPort} for remote clients (0:
     * it takes none). UDP, Aeron.
     */
    public record Peer(String id, String host, int replicationPort, int clientPort) {
    }

    /**
     * One hosted queue.
     *
     * @param rollCycle  a Chronicle roll cycle name (e.g. FAST_HOURLY), see {@link RollCycleNames}
     * @param encryption what the queue's descriptor must say; the node holds no data key and never seals
     * @param ackMode    when an appender on the leader counts an excerpt as written
     */
    public record QueueSettings(String name, String rollCycle, Encryption encryption, AckMode ackMode) {
    }

    /** The cipher mode a hosted queue must have, or none. */
    public enum Encryption { NONE, AES_128_CTR, AES_128_CTR_POLY1305 }

    /** A setting the engine cannot run with; {@link #field()} names it as the builder spells it. */
    public static final class InvalidSettingException extends io.queueenterprise.replication.ReplicationException {
        private static final long serialVersionUID = 1L;
        private final String field;

        InvalidSettingException(String field, String problem) {
            super(field + ": " + problem);
            this.field = field;
        }

        public String field() {
            return field;
        }
    }

    /** Collects the settings; {@link #build()} checks them all and names the first bad one. */
    public static final class Builder {
        private String nodeId;
        private Path dataDirectory;
        private final List<Peer> peers = new ArrayList<>();
        private final List<QueueSettings> queues = new ArrayList<>();
        private java.time.Duration leaseTimeout = DEFAULT_LEASE_TIMEOUT;

        private Builder() {
        }

        public Builder nodeId(String nodeId) {
            this.nodeId = nodeId;
            return this;
        }

        public Builder dataDirectory(Path dataDirectory) {
            this.dataDirectory = dataDirectory;
            return this;
        }

        public Builder peer(String id, String host, int replicationPort, int clientPort) {
            peers.add(new Peer(id, host, replicationPort, clientPort));
            return this;
        }

        /** See {@link EngineSettings#leaseTimeout()}; zero turns the lease off. */
        public Builder leaseTimeout(java.time.Duration leaseTimeout) {
            this.leaseTimeout = leaseTimeout;
            return this;
        }

        public Builder queue(String name, String rollCycle, Encryption encryption, AckMode ackMode) {
            queues.add(new QueueSettings(name, rollCycle, encryption, ackMode));
            return this;
        }

        /**
         * @throws InvalidSettingException naming the field, for a value the engine or the wire format cannot carry
         */
        public EngineSettings build() {
            if (nodeId == null || nodeId.isBlank()) {
                throw new InvalidSettingException("nodeId", "must be set");
            }
            if (dataDirectory == null) {
                throw new InvalidSettingException("dataDirectory", "must be set");
            }
            checkPeers();
            checkQueues();
            if (leaseTimeout == null || leaseTimeout.isNegative() || leaseTimeout.compareTo(java.time.Duration.ofMinutes(1)) > 0) {
                throw new InvalidSettingException("leaseTimeout", leaseTimeout + " is not 0 (off) .. 1 minute");
            }
            return new EngineSettings(this);
        }

        private void checkPeers() {
            if (peers.isEmpty() || peers.size() > Frame.MAX_PEERS) {
                throw new InvalidSettingException("peers", peers.size() + " peers; the protocol carries 1.." + Frame.MAX_PEERS);
            }
            Set<String> ids = new HashSet<>();
            for (Peer p : peers) {
                if (p.id() == null || p.id().isBlank()) {
                    throw new InvalidSettingException("peers.id", "every peer needs an id: " + p);
                }
                if (p.host() == null || p.host().isBlank()) {
                    throw new InvalidSettingException("peers.host", "peer " + p.id() + " has no host");
                }
                if (p.replicationPort() < 1 || p.replicationPort() > 65_535) {
                    throw new InvalidSettingException("peers.replicationPort", "peer " + p.id() + ": "
                            + p.replicationPort() + " is not a UDP port (1..65535)");
                }
                if (p.clientPort() < 0 || p.clientPort() > 65_535) {
                    throw new InvalidSettingException("peers.clientPort", "peer " + p.id() + ": "
                            + p.clientPort() + " is not a UDP port (0: none, 1..65535)");
                }
                ids.add(p.id());
            }
            if (ids.size() != peers.size()) {
                throw new InvalidSettingException("peers", "peer ids must be unique: " + peers.stream().map(Peer::id).toList());
            }
            if (!ids.contains(nodeId)) {
                throw new InvalidSettingException("nodeId", nodeId + " is not among the peers " + peers);
            }
        }

        private void checkQueues() {
            if (queues.isEmpty() || queues.size() > HelloBody.MAX_QUEUES) {
                throw new InvalidSettingException("queues", queues.size() + " queues; 1.." + HelloBody.MAX_QUEUES + " are supported");
            }
            Set<String> names = new HashSet<>();
            for (QueueSettings q : queues) {
                int length = q.name() == null ? 0 : q.name().getBytes(StandardCharsets.UTF_8).length;
                if (length == 0 || length > 255) {
                    throw new InvalidSettingException("queues.name", "'" + q.name() + "' must be 1..255 bytes of UTF-8");
                }
                if (!names.add(q.name())) {
                    throw new InvalidSettingException("queues.name", "'" + q.name() + "' is hosted twice");
                }
                if (q.rollCycle() == null) {
                    throw new InvalidSettingException("queues.rollCycle", "queue '" + q.name() + "' has none");
                }
                try {
                    RollCycleNames.of(q.rollCycle());
                } catch (RuntimeException e) {
                    throw new InvalidSettingException("queues.rollCycle", "queue '" + q.name() + "': " + e.getMessage());
                }
                if (q.encryption() == null) {
                    throw new InvalidSettingException("queues.encryption", "queue '" + q.name() + "' has none (NONE for a plain queue)");
                }
                if (q.ackMode() == null) {
                    throw new InvalidSettingException("queues.ackMode", "queue '" + q.name() + "' has none");
                }
            }
        }
    }
}
