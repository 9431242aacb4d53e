package io.queueenterprise.replication;

import org.HdrHistogram.Histogram;

/**
 * What drives a node's role, from outside the data path: the admin endpoint (and through it the operator or
 * {@code qe node promote|follow|fence}) calls these. The node never elects itself; a term comes from outside
 * and is persisted by the node before it acts on it. Every method is safe to call from any thread.
 */
public interface NodeControl extends AutoCloseable {

    /** A consistent snapshot of role, term and every queue's replication state. */
    NodeStatus status();

    /**
     * Becomes the leader of every hosted queue at {@code term}: fences the data path, persists the term and its
     * first index in each queue's term history, then opens the queues for appends.
     *
     * @throws StaleTermException when {@code term} is not higher than the highest term this node has seen
     */
    void promote(long term);

    /**
     * Follows {@code leaderNodeId} at {@code term}: persists the term, then connects to the leader, truncates
     * (quarantines) any excerpts past the last index it shares with the leader's term history, and catches up.
     *
     * @throws StaleTermException when {@code term} is lower than the highest term this node has seen, or equal
     *                            to it with another leader
     * @throws IllegalArgumentException when {@code leaderNodeId} is not a configured peer, or is this node
     */
    void follow(String leaderNodeId, long term);

    /**
     * Stops serving as leader at once (appends refused, no more acks sent) and records {@code term} as seen, so
     * that nothing of an older term is accepted. Idempotent.
     *
     * @throws StaleTermException when {@code term} is lower than the highest term this node has seen
     */
    void fence(long term);

    /**
     * Append-to-quorum-ack latencies in nanoseconds recorded since the previous call for {@code queue}
     * (an interval histogram: the caller owns it). Empty when this node did not lead or the queue is not
     * in quorum mode.
     *
     * @throws IllegalArgumentException for a queue this node does not host
     */
    Histogram ackLatencySinceLastCall(String queue);

    /**
     * Why the node cannot replicate until it is restarted, or null: its embedded Aeron client and driver died and
     * could not be restarted in place. Health and readiness fail while it is set (Kubernetes then restarts the pod).
     */
    default String transportProblem() {
        return null;
    }

    /** How many times the node restarted its embedded Aeron client and driver in place since it started. */
    default long transportRestarts() {
        return 0;
    }

    /** Peer sessions closed since start because the peer's identity pin changed to a key the session had not proved. */
    default long identitySessionsClosed() {
        return 0;
    }

    /** Contents of the peer-identities file refused whole since start (malformed). */
    default long peerIdentitiesRefusals() {
        return 0;
    }

    /**
     * Peers this node cannot send to yet, by id, with the reason (a host name that does not resolve yet: it is looked
     * up again with bounded backoff); empty when it can reach every peer's address.
     */
    default java.util.Map<String, String> unresolvedPeers() {
        return java.util.Map.of();
    }

    /** Stops replication gracefully: what was acknowledged stays acknowledged; no excerpt is half written. */
    @Override
    void close();
}
