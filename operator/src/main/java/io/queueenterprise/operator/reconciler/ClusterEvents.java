package io.queueenterprise.operator.reconciler;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.Condition;
import io.queueenterprise.operator.api.FailoverStatus;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.ReplicaStatus;

/**
 * The Kubernetes Events a QueueCluster's status calls for (what {@code kubectl describe qc} and
 * {@code kubectl get events} show): a leader in place at a new term, replicas turning unhealthy or healthy again,
 * excerpts moved to quarantine. Pure, from the status alone: each event carries a key naming the one occurrence it
 * reports (the term; the condition's transition; the quarantine folder), so that {@link EventPublisher} writes it
 * once however many reconciles see it, and an operator that restarts does not write it again.
 */
public final class ClusterEvents {
    private ClusterEvents() {
    }

    /** One event: {@code type} Normal or Warning. */
    public record ClusterEvent(String type, String reason, String message, String key) {
    }

    public static List<ClusterEvent> of(QueueClusterStatus status) {
        List<ClusterEvent> events = new ArrayList<>();
        leaderInPlace(status, events);
        Condition healthy = status.getConditions() == null ? null : status.getConditions().stream()
            .filter(c -> Conditions.REPLICAS_HEALTHY.equals(c.getType())).findFirst().orElse(null);
        if (healthy != null && "False".equals(healthy.getStatus())) {
            events.add(new ClusterEvent("Warning", "ReplicaProblem", healthy.getReason() + ": " + healthy.getMessage(),
                "unhealthy/" + healthy.getReason() + "/" + healthy.getLastTransitionTime()));
        } else if (healthy != null && "True".equals(healthy.getStatus())) {
            events.add(new ClusterEvent("Normal", "ReplicasHealthy", healthy.getMessage(), "healthy/" + healthy.getLastTransitionTime()));
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
