package io.queueenterprise.operator.failover;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * {@code GET /v1/status} of a node's admin endpoint as the operator reads it (docs/node-contract.md): the operator's
 * own copy of the node's NodeStatus JSON, so that it needs no node classes. Unknown fields are ignored: a newer node
 * may report more.
 *
 * @param cpusAllowedList the node's {@code Cpus_allowed_list} from /proc/self/status at start, for the Pinned
 *                        condition; null when the node does not report it
 * @param calibration     the node's {@code qe calibrate} document (schema {@code qe-calibration/1},
 *                        docs/calibration-json-schema.md) measured on its pinned cores, when it ran one; the operator
 *                        publishes its plain and authenticated-encrypted rates ({@link CalibrationReading})
 * @param transport       the node's embedded Aeron client and driver; null from a node that does not report it
 * @param peerAddresses   every other peer as this node addresses it; empty from a node that does not report them
 * @param lease           the node's leader lease (docs/replication.md "Leader lease"); null from a node that does not
 *                        report it
 * @param identity        the node's identity (public key, fingerprint, whether its key file keeps it across restarts);
 *                        null from a node that does not report it
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record NodeStatusView(String nodeId, String role, long term, String leaderNodeId, List<Queue> queues,
                             String cpusAllowedList, JsonNode calibration, Transport transport, List<PeerAddress> peerAddresses,
                             Lease lease, Identity identity) {
    public static final String LEADER = "LEADER";
    public static final String FOLLOWER = "FOLLOWER";
    public static final String FENCED = "FENCED";
    public static final String STANDBY = "STANDBY";

    public NodeStatusView {
        queues = queues == null ? List.of() : List.copyOf(queues);
        peerAddresses = peerAddresses == null ? List.of() : List.copyOf(peerAddresses);
    }

    /** A node reporting nothing beyond its role, term and queues (tests, and nodes older than those fields). */
    public NodeStatusView(String nodeId, String role, long term, String leaderNodeId, List<Queue> queues, String cpusAllowedList) {
        this(nodeId, role, term, leaderNodeId, queues, cpusAllowedList, null, null, List.of(), null, null);
    }

    /** A node that does not report its lease. */
    public NodeStatusView(String nodeId, String role, long term, String leaderNodeId, List<Queue> queues, String cpusAllowedList,
                          JsonNode calibration, Transport transport, List<PeerAddress> peerAddresses) {
        this(nodeId, role, term, leaderNodeId, queues, cpusAllowedList, calibration, transport, peerAddresses, null, null);
    }

    /** A node that does not report its identity. */
    public NodeStatusView(String nodeId, String role, long term, String leaderNodeId, List<Queue> queues, String cpusAllowedList,
                          JsonNode calibration, Transport transport, List<PeerAddress> peerAddresses, Lease lease) {
        this(nodeId, role, term, leaderNodeId, queues, cpusAllowedList, calibration, transport, peerAddresses, lease, null);
    }

    /** The identity public key (base64) this node reports, or null (an older node, or none reported). */
    public String identityKey() {
        return identity == null ? null : identity.publicKey();
    }

    /**
     * Whether this node, as leader, acknowledges appends now: it holds its leader lease and its term is confirmed
     * (after a promotion, about the lease timeout later). True from a node that does not report a lease.
     */
    public boolean acknowledges() {
        return lease == null || lease.acknowledging();
    }

    public boolean isLeaderAt(long expectedTerm) {
        return LEADER.equals(role) && term == expectedTerm;
    }

    public boolean isFollowing(String leader, long expectedTerm) {
        return FOLLOWER.equals(role) && term == expectedTerm && leader.equals(leaderNodeId);
    }

    /** Durable index of {@code queue}, -1 when the node does not report it (nothing held). */
    public long durableIndex(String queue) {
        return queues.stream().filter(q -> q.name().equals(queue)).mapToLong(Queue::durableIndex).findFirst().orElse(-1L);
    }

    /**
     * One hosted queue; {@code peers} only on a leader. {@code stateDetail}, {@code writer} and {@code quarantines}
     * read as empty, null and null from a node that does not report them.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Queue(String name, String state, long lastIndex, long durableIndex, long quorumIndex, long firstIndex,
                        List<Peer> peers, long bytesReplicated, long framesDropped, String stateDetail, Writer writer,
                        Quarantines quarantines) {
        public Queue {
            peers = peers == null ? List.of() : List.copyOf(peers);
            stateDetail = stateDetail == null ? "" : stateDetail;
        }

        public Queue(String name, String state, long lastIndex, long durableIndex, long quorumIndex, long firstIndex,
                     List<Peer> peers, long bytesReplicated, long framesDropped) {
            this(name, state, lastIndex, durableIndex, quorumIndex, firstIndex, peers, bytesReplicated, framesDropped, "", null, null);
        }
    }

    /** The embedded Aeron client and driver: {@code up} false while down (being restarted, or a restart failed). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Transport(boolean up, String problem, long restarts, String lastRestartCause, String lastRestartAt) {
    }

    /** Another peer as this node addresses it: {@code resolved} false while its host name has no channel. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record PeerAddress(String nodeId, String host, boolean resolved, String problem) {
    }

    /** The queue's writer thread: {@code blockedMillis} in the operation in hand (0 when idle or quick). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Writer(long blockedMillis, long stalls, String lastStallAt) {
    }

    /** Folders of excerpts this replica moved aside (never served, never deleted by the node): the newest one's facts. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Quarantines(long count, String lastReason, String lastAt, String lastDirectory, long lastExcerpts) {
    }

    /** The leader lease: {@code acknowledging} while it leads, holds the lease and its term is confirmed. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Lease(boolean acknowledging, boolean held, boolean confirmed, long timeoutMillis) {
    }

    /**
     * The node's identity: {@code persistent} true when its key lives in a key file (kept across restarts), false
     * when drawn for this run alone.
     */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Identity(String publicKey, String fingerprint, boolean persistent) {
    }

    /** A follower as its leader sees it. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Peer(String nodeId, boolean connected, long durableIndex, long lagExcerpts, long lagNanos, String state) {
    }
}
