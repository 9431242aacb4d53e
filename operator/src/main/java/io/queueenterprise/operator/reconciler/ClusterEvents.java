package io.queueenterprise.operator.reconciler;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.Condition;
import io.queueenterprise.operator.api.FailoverStatus;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.ReplicaStatus;
import io.queueenterprise.operator.model.NodeIdentityModel;

/**
 * The Kubernetes Events a QueueCluster's status calls for (what {@code kubectl describe qc} and
 * {@code kubectl get events} show): a leader in place at a new term, replicas turning unhealthy or healthy again,
 * excerpts moved to quarantine. Pure, from the status a reconcile read and the one it built: each event carries a key
 * naming the one occurrence it reports (the term; the condition's transition; the quarantine folder), so that
 * {@link EventPublisher} writes it once however many reconciles see it, and an operator that restarts does not write
 * it again.
 * <p>
 * A condition's transition is named after the persisted state it leaves (status, reason and that state's
 * {@code lastTransitionTime}), never after the new {@code lastTransitionTime}: that one is the reconcile's clock, and
 * a reconcile whose status patch fails (409: the failover's term write got there first) is retried a second later
 * from the same persisted state with another clock. Named after what it left, the retry reports the same occurrence
 * under the same name.
 */
public final class ClusterEvents {
    private ClusterEvents() {
    }

    /** One event: {@code type} Normal or Warning. */
    public record ClusterEvent(String type, String reason, String message, String key) {
    }

    /**
     * @param previous the status the reconcile read (the persisted one), never null
     * @param status   the status it built
     */
    public static List<ClusterEvent> of(QueueClusterStatus previous, QueueClusterStatus status) {
        List<ClusterEvent> events = new ArrayList<>();
        leaderInPlace(status, events);
        Condition was = replicasHealthy(previous);
        Condition healthy = replicasHealthy(status);
        String left = was == null ? "none" : was.getStatus() + "/" + was.getReason() + "/" + was.getLastTransitionTime();
        boolean statusChanged = healthy != null && (was == null || !was.getStatus().equals(healthy.getStatus()));
        if (healthy != null && "False".equals(healthy.getStatus())
            && (statusChanged || !String.valueOf(was.getReason()).equals(healthy.getReason()))) {
            events.add(new ClusterEvent("Warning", "ReplicaProblem", healthy.getReason() + ": " + healthy.getMessage(),
                "unhealthy/" + healthy.getReason() + "/after/" + left));
        } else if (healthy != null && "True".equals(healthy.getStatus()) && statusChanged) {
            events.add(new ClusterEvent("Normal", "ReplicasHealthy", healthy.getMessage(), "healthy/after/" + left));
        }
        if (status.getReplicas() != null) {
            for (ReplicaStatus replica : status.getReplicas()) {
                replica.getQueues().stream().filter(q -> q.getLastQuarantine() != null).forEach(q -> events.add(new ClusterEvent(
                    "Warning", "Quarantined", replica.getName() + " " + q.getName() + ": excerpts moved aside, " + q.getLastQuarantine()
                        + " (" + q.getQuarantines() + " folder(s) held; never served nor deleted by the node)",
                    "quarantine/" + replica.getName() + "/" + q.getName() + "/" + q.getLastQuarantine())));
            }
        }
        return events;
    }

    /**
     * What the identity plan did or found: a replica pinned for the first time, a rotation done (Normal), a replica
     * reporting a key other than its pin, a rotation annotation naming no replica (Warning). Once per occurrence.
     */
    public static List<ClusterEvent> identities(NodeIdentityModel.Plan plan) {
        List<ClusterEvent> events = new ArrayList<>();
        for (String replica : plan.newlyPinned()) {
            String fingerprint = NodeIdentityModel.fingerprint(plan.pins().get(replica));
            events.add(new ClusterEvent("Normal", "NodeIdentityPinned", replica + " pinned to identity " + fingerprint
                + " (its first reported key)", "identity-pin/" + replica + "/" + fingerprint));
        }
        for (NodeIdentityModel.Mismatch mismatch : plan.mismatches()) {
            events.add(new ClusterEvent("Warning", "NodeIdentityMismatch", mismatch.message(),
                "identity-mismatch/" + mismatch.replica() + "/" + mismatch.pinned() + "/" + mismatch.reported()));
        }
        if (plan.rotated() != null) {
            String fingerprint = NodeIdentityModel.fingerprint(plan.pins().get(plan.rotated()));
            events.add(new ClusterEvent("Normal", "NodeIdentityRotated", plan.rotated() + " re-pinned to identity " + fingerprint
                + " as " + NodeIdentityModel.ROTATE_ANNOTATION + " asked; annotation removed",
                "identity-rotate/" + plan.rotated() + "/" + fingerprint));
        }
        if (plan.unknownRotation() != null) {
            events.add(new ClusterEvent("Warning", "UnknownRotateNode", NodeIdentityModel.ROTATE_ANNOTATION + "="
                + plan.unknownRotation() + " names no replica of this cluster: nothing rotated",
                "rotate-node-unknown/" + plan.unknownRotation()));
        }
        return events;
    }

    private static Condition replicasHealthy(QueueClusterStatus status) {
        return status.getConditions() == null ? null : status.getConditions().stream()
            .filter(c -> Conditions.REPLICAS_HEALTHY.equals(c.getType())).findFirst().orElse(null);
    }

    /** The leader the status records answers as leader at the recorded term: once per term. */
    private static void leaderInPlace(QueueClusterStatus status, List<ClusterEvent> events) {
        String leader = status.getLeader();
        Long term = status.getTerm();
        if (leader == null || term == null || status.getReplicas() == null) {
            return;
        }
        boolean leading = status.getReplicas().stream().anyMatch(r -> leader.equals(r.getName()) && "LEADER".equals(r.getRole())
            && term.equals(r.getTerm()));
        if (!leading) {
            return;
        }
        FailoverStatus failover = status.getFailover();
        String how = failover != null && term.equals(failover.getTerm()) && failover.getFormerLeader() != null
            ? ", taking over from " + failover.getFormerLeader() : "";
        events.add(new ClusterEvent("Normal", "LeaderElected", leader + " leads at term " + term + how, "term/" + term));
    }
}
