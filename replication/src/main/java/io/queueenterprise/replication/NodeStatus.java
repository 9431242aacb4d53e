package io.queueenterprise.replication;

import java.util.List;

/**
 * A node's state as the admin endpoint reports it (JSON, API v1) and the operator reads it. Fields are only ever
 * added (a v1 reader ignores the ones it does not know); a reader of an older node finds the newer fields absent,
 * read here as "nothing to report" ({@link Transport#UNKNOWN}, no peer addresses).
 *
 * @param nodeId       this node's id from its configuration
 * @param role         what the node does now
 * @param term         the highest term this node has persisted; 0 before any
 * @param leaderNodeId the leader it follows, itself when leading, null when it knows none
 * @param queues       every hosted queue, in configuration order
 * @param cpusAllowedList this process's {@code Cpus_allowed_list} (read at start): the operator's Pinned condition
 *                     compares it with the cores the kubelet granted; null when unknown
 * @param transport    the embedded Aeron client and driver: up or not, and their restarts in place since start
 * @param peerAddresses every other peer, in configuration order: whether this node can address it (its host name
 *                     resolved), the last reason it could not, and its identity as pinned and as proved
 * @param identity     this node's own identity (its public key: what the operator pins); null from a node older
 *                     than this field
 */
public record NodeStatus(String nodeId, Role role, long term, String leaderNodeId, List<QueueStatus> queues,
                         String cpusAllowedList, Transport transport, List<PeerAddress> peerAddresses, Lease lease,
                         Identity identity) {
    /** Read once: the kernel's grant does not change under a running container. */
    private static final String CPUS_ALLOWED_LIST = CpusAllowed.list();

    public NodeStatus {
        queues = List.copyOf(queues);
        transport = transport == null ? Transport.UNKNOWN : transport;
        peerAddresses = peerAddresses == null ? List.of() : List.copyOf(peerAddresses);
        lease = lease == null ? Lease.NONE : lease;
    }

    /** Without an identity to report (a reader of an older node, stand-ins, tests). */
    public NodeStatus(String nodeId, Role role, long term, String leaderNodeId, List<QueueStatus> queues,
                      String cpusAllowedList, Transport transport, List<PeerAddress> peerAddresses, Lease lease) {
        this(nodeId, role, term, leaderNodeId, queues, cpusAllowedList, transport, peerAddresses, lease, null);
    }

    /** A status of this process, with its own {@code Cpus_allowed_list}, its lease and its identity. */
    public NodeStatus(String nodeId, Role role, long term, String leaderNodeId, List<QueueStatus> queues,
                      Transport transport, List<PeerAddress> peerAddresses, Lease lease, Identity identity) {
        this(nodeId, role, term, leaderNodeId, queues, CPUS_ALLOWED_LIST, transport, peerAddresses, lease, identity);
    }

    /** Without a lease to report (a reader of an older node, stand-ins, tests). */
    public NodeStatus(String nodeId, Role role, long term, String leaderNodeId, List<QueueStatus> queues,
                      String cpusAllowedList, Transport transport, List<PeerAddress> peerAddresses) {
        this(nodeId, role, term, leaderNodeId, queues, cpusAllowedList, transport, peerAddresses, Lease.NONE);
    }

    /** A status of this process, with its own {@code Cpus_allowed_list}, and its lease. */
    public NodeStatus(String nodeId, Role role, long term, String leaderNodeId, List<QueueStatus> queues,
                      Transport transport, List<PeerAddress> peerAddresses, Lease lease) {
        this(nodeId, role, term, leaderNodeId, queues, CPUS_ALLOWED_LIST, transport, peerAddresses, lease);
    }

    /** A status of this process, with its own {@code Cpus_allowed_list}. */
    public NodeStatus(String nodeId, Role role, long term, String leaderNodeId, List<QueueStatus> queues,
                      Transport transport, List<PeerAddress> peerAddresses) {
        this(nodeId, role, term, leaderNodeId, queues, CPUS_ALLOWED_LIST, transport, peerAddresses);
    }

    /** A status of this process with nothing to say about transport or peer addresses (stand-ins, tests). */
    public NodeStatus(String nodeId, Role role, long term, String leaderNodeId, List<QueueStatus> queues) {
        this(nodeId, role, term, leaderNodeId, queues, CPUS_ALLOWED_LIST, Transport.UNKNOWN, List.of());
    }

    /** What a node does. */
    public enum Role {
        /** Started, no term yet or not yet told whom to follow: serves nothing, accepts nothing. */
        STANDBY,
        /** Accepts appends and ships them to followers. */
        LEADER,
        /** Receives excerpts from the leader and writes them at the same indexes; can never append. */
        FOLLOWER,
        /** Told to stop leading; serves nothing until told to follow or promoted at a higher term. */
        FENCED
    }

    /**
     * The node's embedded Aeron client and media driver (one pair, driven by the duty thread). When they die (a stall
     * of the duty thread past their liveness timeout) the node restarts them in place, retrying every 5 s while a
     * restart fails; peers handshake again and replication resumes from where each follower stands.
     *
     * @param up               false while they are down: being restarted, or a restart failed (then health fails too)
     * @param problem          why they are down now; null when up
     * @param restarts         restarts tried since the node started (failed ones included)
     * @param lastRestartCause why the latest restart was needed; null when none was
     * @param lastRestartAt    when the latest restart was tried, ISO-8601 UTC; null when none was
     */
    public record Transport(boolean up, String problem, long restarts, String lastRestartCause, String lastRestartAt) {
        /** What a reader of a node older than these fields sees: up, as far as it can tell. */
        public static final Transport UNKNOWN = new Transport(true, null, 0, null, null);
    }

    /**
     * The leader lease (docs/replication.md "Leader lease"): a leader acknowledges only while a majority of replicas
     * answered at its term within the timeout and its term is confirmed.
     *
     * @param acknowledging  this node may acknowledge appends now (leads, holds the lease, term confirmed)
     * @param held           a majority echoed this leader's clock within the timeout (false when not leading)
     * @param confirmed      the term is confirmed (a majority answered at it and, above term 1, one timeout and a
     *                       margin passed since)
     * @param timeoutMillis  the lease timeout; 0: no lease (always acknowledging while leading)
     * @param sinceMillisAgo how long it has been acknowledging without a break; -1 when it is not
     * @param peers          per other replica, how long ago the leader sent the clock it last echoed; -1: none at
     *                       this term (empty when not leading)
     */
    public record Lease(boolean acknowledging, boolean held, boolean confirmed, long timeoutMillis, long sinceMillisAgo,
                        List<PeerEcho> peers) {
        /** What a reader of a node older than the lease sees. */
        public static final Lease NONE = new Lease(false, false, false, 0, -1, List.of());

        public Lease {
            peers = peers == null ? List.of() : List.copyOf(peers);
        }
    }

    /** @param echoedMillisAgo how long ago this leader sent the clock the peer last echoed; -1: none at this term */
    public record PeerEcho(String nodeId, long echoedMillisAgo) {
    }

    /**
     * This node's own identity (docs/replication.md, per-node identity): the operator reads {@code publicKey} and pins it
     * in the other nodes' peer-identities file.
     *
     * @param publicKey   base64 of the 32-byte Ed25519 public key
     * @param fingerprint its first 8 hex digits, as logs name it
     * @param persistent  read from (or drawn into) the identity key file; false: drawn for this run only, so it changes
     *                    at every start and no peer can pin it
     */
    public record Identity(String publicKey, String fingerprint, boolean persistent) {
    }

    /**
     * Another peer as this node addresses it. A peer's host name (in Kubernetes a StatefulSet pod behind a headless
     * Service) may resolve only once its pod exists: until then this node has no channel to it and looks the name up
     * again with bounded backoff (at most every 30 s), serving everything else meanwhile.
     *
     * @param nodeId        the peer's id
     * @param host          the peer's host (name or address) from the configuration
     * @param resolved      this node has a channel to the peer: its name resolved and Aeron took the address
     * @param problem       why it has none now; null when resolved
     * @param lastProblem   the latest reason it had none since start, kept once resolved; null when it never lacked one
     * @param lastProblemAt when {@code lastProblem} was last seen, ISO-8601 UTC; null when never
     * @param identityPinned whether its identity key is pinned (by the node document or the peer-identities file):
     *                      its handshakes must prove that key
     * @param identityFingerprint the fingerprint of the pinned key its live session proved; null without a session,
     *                      or when the session proved none (the peer was unpinned when it started)
     */
    public record PeerAddress(String nodeId, String host, boolean resolved, String problem, String lastProblem,
                              String lastProblemAt, boolean identityPinned, String identityFingerprint) {
        /** Without identity (a reader of an older node, stand-ins, tests). */
        public PeerAddress(String nodeId, String host, boolean resolved, String problem, String lastProblem,
                           String lastProblemAt) {
            this(nodeId, host, resolved, problem, lastProblem, lastProblemAt, false, null);
        }
    }
}
