package io.queueenterprise.operator.reconciler;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Condition;
import io.queueenterprise.operator.api.ReplicaStatus;
import io.queueenterprise.operator.failover.NodeStatusView;

/**
 * What each answering replica reports wrong with itself now, beyond its role (docs/node-contract.md, NodeStatus):
 * problems the node works around on its own and that an operator should still see without reading logs. Pure:
 * the {@code ReplicasHealthy} and {@code Quarantined} conditions and each replica's {@code problems} from the nodes'
 * own status. A node that does not report a field has nothing to say about it.
 */
public final class ReplicaHealth {
    /** A writer blocked this long in one operation is counted as a stall by the node itself. */
    static final long WRITER_STALL_MILLIS = 1_000;

    /** Queue states that will not change without an operator or more room: the node says why in stateDetail. */
    private static final Set<String> NEEDS_ATTENTION = Set.of("CORRUPTED", "DISK_FULL", "BEHIND_RETENTION");

    /** Condition reasons, most severe first: the condition's reason is the most severe one found. */
    enum Reason {
        /** The embedded Aeron client and driver are down: the replica neither replicates nor serves clients. */
        TransportDown,
        /** A queue is CORRUPTED, DISK_FULL or BEHIND_RETENTION. */
        QueueNeedsAttention,
        /** A queue's writer has been blocked in its store for a second or more (a stalled lock holder?). */
        WriterStalled,
        /** A peer's host name has no channel: this replica could not reach it (e.g. if that peer were elected). */
        PeerUnaddressable
    }

    record Problem(String replica, Reason reason, String message) {
        @Override
        public String toString() {
            return replica + ": " + message;
        }
    }

    private ReplicaHealth() {
    }

    /** Every problem {@code node} reports, in {@link Reason} order (the order the checks below run in). */
    static List<Problem> problems(String replica, NodeStatusView node) {
        List<Problem> problems = new ArrayList<>();
        NodeStatusView.Transport transport = node.transport();
        if (transport != null && !transport.up()) {
            problems.add(new Problem(replica, Reason.TransportDown, "transport down: " + orUnknown(transport.problem())));
        }
        for (NodeStatusView.Queue queue : node.queues()) {
            if (NEEDS_ATTENTION.contains(queue.state())) {
                problems.add(new Problem(replica, Reason.QueueNeedsAttention, queue.name() + " is " + queue.state()
                    + (queue.stateDetail().isEmpty() ? "" : ": " + queue.stateDetail())));
            }
        }
        for (NodeStatusView.Queue queue : node.queues()) {
            if (queue.writer() != null && queue.writer().blockedMillis() >= WRITER_STALL_MILLIS) {
                problems.add(new Problem(replica, Reason.WriterStalled, queue.name() + "'s writer blocked in the store for "
                    + queue.writer().blockedMillis() + " ms"));
            }
        }
        for (NodeStatusView.PeerAddress peer : node.peerAddresses()) {
            if (!peer.resolved()) {
                problems.add(new Problem(replica, Reason.PeerUnaddressable, "cannot address " + peer.nodeId() + ": "
                    + orUnknown(peer.problem())));
            }
        }
        return problems;
    }

    /**
     * True with reason {@code NothingReported} when no answering replica reports a problem; else False with the most
     * severe reason and every problem in the message; Unknown when none answers. Replicas that do not answer are the
     * Quorum and Ready conditions' business.
     */
    static Condition healthyCondition(List<Problem> problems, int answering, int replicas, long generation) {
        if (answering == 0) {
            return Conditions.unknown(Conditions.REPLICAS_HEALTHY, "NoReplicaAnswers", "none of " + replicas
                + " replicas answers on its admin endpoint", generation);
        }
        if (problems.isEmpty()) {
            return Conditions.of(Conditions.REPLICAS_HEALTHY, true, "NothingReported", answering + " of " + replicas
                + " replicas answer and none reports a problem", generation);
        }
        Reason worst = problems.stream().map(Problem::reason).min(Enum::compareTo).orElseThrow();
        return Conditions.of(Conditions.REPLICAS_HEALTHY, false, worst.name(),
            String.join("; ", problems.stream().map(Problem::toString).toList()), generation);
    }

    /**
     * True while any replica holds quarantined excerpts: folders the node never serves nor deletes, left for a person
     * to look at (docs/replication.md, "Divergence: the quarantine"); each named with its reason, size and place.
     */
    static Condition quarantinedCondition(List<ReplicaStatus> replicas, long generation) {
        if (replicas.stream().allMatch(replica -> "UNREACHABLE".equals(replica.getRole()))) {
            return Conditions.unknown(Conditions.QUARANTINED, "NoReplicaAnswers", "none of " + replicas.size()
                + " replicas answers on its admin endpoint", generation);
        }
        List<String> held = new ArrayList<>();
        for (ReplicaStatus replica : replicas) {
            replica.getQueues().stream().filter(q -> q.getQuarantines() != null && q.getQuarantines() > 0)
                .forEach(q -> held.add(replica.getName() + " " + q.getName() + ": " + q.getQuarantines() + " folder(s), newest "
                    + q.getLastQuarantine()));
        }
        if (held.isEmpty()) {
            return Conditions.of(Conditions.QUARANTINED, false, "NoneHeld", "no replica holds quarantined excerpts", generation);
        }
        return Conditions.of(Conditions.QUARANTINED, true, "ExcerptsMovedAside", String.join("; ", held)
            + " (never served nor deleted by the node: inspect, then remove the folder)", generation);
    }

    /** The newest quarantine in words, or null when none. */
    static String lastQuarantine(NodeStatusView.Quarantines quarantines) {
        if (quarantines == null || quarantines.count() == 0) {
            return null;
        }
        return orUnknown(quarantines.lastReason()) + " at " + orUnknown(quarantines.lastAt()) + ", "
            + (quarantines.lastExcerpts() < 0 ? "excerpts not recorded" : quarantines.lastExcerpts() + " excerpt(s)") + " in "
            + orUnknown(quarantines.lastDirectory());
    }

    private static String orUnknown(String text) {
        return text == null ? "(not reported)" : text;
    }
}
