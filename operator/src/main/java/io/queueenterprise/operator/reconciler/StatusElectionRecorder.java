package io.queueenterprise.operator.reconciler;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.queueenterprise.operator.api.FailoverStatus;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.failover.ElectionRecorder;
import io.queueenterprise.operator.failover.Plan;

/**
 * Records elections in the QueueCluster's status. The term goes to the API server at once, with an update guarded by
 * resourceVersion on a fresh read: if another writer (a second operator replica that also thinks it leads) got there
 * first, the update fails with a conflict and nothing is promoted. The leader is recorded in memory and written by
 * the reconcile's own status patch.
 */
final class StatusElectionRecorder implements ElectionRecorder {
    private final KubernetesClient client;
    private final QueueCluster cluster;
    private final OperatorMetrics metrics;

    private final String detectedAt;
    private final boolean planned;

    /**
     * @param detectedAt when this reconcile began, having found what it acts on (a lost leader; a stale revision)
     * @param planned    a rolling update's switchover from a live leader, not a failover
     */
    StatusElectionRecorder(KubernetesClient client, QueueCluster cluster, OperatorMetrics metrics, String detectedAt,
                           boolean planned) {
        this.client = client;
        this.cluster = cluster;
        this.metrics = metrics;
        this.detectedAt = detectedAt;
        this.planned = planned;
    }

    @Override
    public void recordTerm(Plan.Elect plan) {
        QueueCluster fresh = client.resources(QueueCluster.class).inNamespace(cluster.getMetadata().getNamespace())
            .withName(cluster.getMetadata().getName()).get();
        if (fresh == null) {
            throw new IllegalStateException("QueueCluster " + cluster.getMetadata().getName() + " is gone");
        }
        QueueClusterStatus status = fresh.getStatus() != null ? fresh.getStatus() : new QueueClusterStatus();
        long recorded = status.getTerm() == null ? 0 : status.getTerm();
        if (recorded >= plan.term()) {
            throw new IllegalStateException("term " + plan.term() + " is not above the recorded term " + recorded
                + ": another operator instance issued it; replanning");
        }
        FailoverStatus failover = new FailoverStatus();
        failover.setPhase(FailoverStatus.Phase.PROMOTING);
        failover.setTerm(plan.term());
        failover.setFormerLeader(plan.formerLeader());
        failover.setCandidate(plan.candidate());
        failover.setStartedAt(Instant.now().toString());
        failover.setDetectedAt(detectedAt);
        failover.setPlanned(planned ? Boolean.TRUE : null);
        status.setTerm(plan.term());
        status.setFailover(failover);
        status.setConditions(failingOver(status, plan, fresh.getMetadata().getGeneration()));
        fresh.setStatus(status);
        QueueCluster written = client.resources(QueueCluster.class).inNamespace(fresh.getMetadata().getNamespace())
            .resource(fresh).updateStatus();
        // The reconcile's own status patch carries the resource's version: with the version read at its start it was
        // refused (409, "the object has been modified") after every election, and the leader reached status only at
        // the retry, seconds later (16 refusals in one suite run, most in NodeInPodsIT's failover and rolling update).
        cluster.getMetadata().setResourceVersion(written.getMetadata().getResourceVersion());
        // what the rest of this reconcile builds on
        QueueClusterStatus local = cluster.getStatus() != null ? cluster.getStatus() : new QueueClusterStatus();
        local.setTerm(plan.term());
        local.setFailover(failover);
        cluster.setStatus(local);
        if (plan.formerLeader() != null) {
            metrics.failover(cluster);
        }
    }

    /**
     * The conditions while the recorded term has no leader yet: Ready False, Failover True, the others as they were.
     * Without this, the term write carried the previous Ready True next to a term nobody leads yet, which a reader
     * (and NodeInPodsIT, at an operator that died right after this write) took for a finished failover.
     */
    private static List<Condition> failingOver(QueueClusterStatus status, Plan.Elect plan, Long generation) {
        List<Condition> previous = status.getConditions() == null ? List.of() : status.getConditions();
        long observed = generation == null ? 0 : generation;
        String what = "term " + plan.term() + " recorded: " + plan.formerLeader() + " -> " + plan.candidate() + " ("
            + FailoverStatus.Phase.PROMOTING + ")";
        List<Condition> changed = Conditions.merge(previous, List.of(
            Conditions.of(Conditions.READY, false, "FailingOver", what, observed),
            Conditions.of(Conditions.FAILOVER, true, "InProgress", what, observed)), Instant.now().toString());
        List<Condition> conditions = new ArrayList<>();
        for (Condition condition : previous) {
            if (!Conditions.READY.equals(condition.getType()) && !Conditions.FAILOVER.equals(condition.getType())) {
                conditions.add(condition);
            }
        }
        conditions.addAll(changed);
        return conditions;
    }

    @Override
    public void recordLeader(String leader, long term) {
        QueueClusterStatus local = cluster.getStatus() != null ? cluster.getStatus() : new QueueClusterStatus();
        local.setLeader(leader);
        local.setTerm(Math.max(term, local.getTerm() == null ? 0 : local.getTerm()));
        cluster.setStatus(local);
    }
}
