package io.queueenterprise.operator.reconciler;

import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.StatefulMetric;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.operator.api.Calibration;
import io.queueenterprise.operator.api.CalibrationStatus;
import io.queueenterprise.operator.api.LastFailover;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.QueueProgress;
import io.queueenterprise.operator.api.ReplicaStatus;

/**
 * What the operator exports to Prometheus: reconcile outcomes, failovers, each cluster's term and conditions, each
 * replica's durable index and lag, and the published calibration figures. The chart's alerts are written against
 * these names (helm/queue-enterprise-operator/templates/prometheusrule.yaml).
 *
 * <p>Series live as long as what they describe: a replica or queue gone from a cluster's status loses its series at
 * the next publish, and a deleted QueueCluster loses all of its series ({@link #forget}), so dashboards and alerts
 * never read a stale lag or condition of something that no longer exists.
 */
public final class OperatorMetrics {
    private static final List<String> VERDICTS = List.of("ok", "unreachable", "time-limit");
    private final Counter reconciliations;
    private final Counter failovers;
    private final Histogram failoverSeconds;
    /** The term of each (namespace, cluster)'s failover last observed: a reconcile retried after a 409 observes none again. */
    private final Map<List<String>, Long> observedFailoverTerms = new ConcurrentHashMap<>();
    private final Gauge term;
    private final Gauge condition;
    private final Gauge conditionReason;
    /** The reason each (namespace, cluster, type) was last published with: its series is removed when the reason changes. */
    private final Map<List<String>, String> publishedReasons = new ConcurrentHashMap<>();
    private final Gauge durableIndex;
    private final Gauge lag;
    private final Gauge calibration;
    private final Gauge poolCalibration;
    private final Gauge poolCalibrationVerdict;
    /** Every series with (namespace, cluster) as its first two labels. */
    private final List<StatefulMetric<?, ?>> perCluster;
    /**
     * UIDs of QueueClusters seen deleted (the most recent 4,096): a reconcile still in flight when the delete arrives
     * must not publish its series again. A cluster created again under the same name has a new UID.
     */
    private final Set<String> deletedUids = Collections.synchronizedSet(Collections.newSetFromMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > 4_096;
        }
    }));

    public OperatorMetrics(PrometheusRegistry registry) {
        reconciliations = Counter.builder().name("queue_enterprise_operator_reconciliations_total")
            .help("QueueCluster reconciliations by result").labelNames("namespace", "cluster", "result").register(registry);
        failovers = Counter.builder().name("queue_enterprise_operator_failovers_total")
            .help("Leaders replaced by the operator").labelNames("namespace", "cluster").register(registry);
        failoverSeconds = Histogram.builder().name("queue_enterprise_operator_failover_seconds")
            .help("Failovers the operator completed (a lost leader replaced), from the leader found lost to the new leader"
                + " in status; status.lastFailover holds the last one")
            .classicOnly().classicUpperBounds(0.25, 0.5, 1, 2, 5, 10, 30, 60, 120)
            .labelNames("namespace", "cluster").register(registry);
        term = Gauge.builder().name("queue_enterprise_cluster_term")
            .help("Highest leadership term the operator issued").labelNames("namespace", "cluster").register(registry);
        condition = Gauge.builder().name("queue_enterprise_cluster_condition")
            .help("1 when the condition is True, 0 otherwise (Ready, Quorum, Pinned, Failover, ReplicasHealthy, Quarantined, Calibrated)")
            .labelNames("namespace", "cluster", "type").register(registry);
        // 1 and 0 cannot tell "not asked for" from "lost" (Pinned False: NotRequested or CoresNotExclusive): alerts need why
        conditionReason = Gauge.builder().name("queue_enterprise_cluster_condition_reason")
            .help("1 for each condition's current reason (e.g. Pinned: ExclusiveCores, NotRequested, NoTunedNode,"
                + " CoresNotExclusive, NotReported); a reason's series is removed when the reason changes")
            .labelNames("namespace", "cluster", "type", "reason").register(registry);
        durableIndex = Gauge.builder().name("queue_enterprise_replica_durable_index")
            .help("Last index a replica holds with everything before it").labelNames("namespace", "cluster", "replica", "queue")
            .register(registry);
        lag = Gauge.builder().name("queue_enterprise_replica_lag_excerpts")
            .help("Leader's last index minus the replica's durable index").labelNames("namespace", "cluster", "replica", "queue")
            .register(registry);
        calibration = Gauge.builder().name("queue_enterprise_replica_calibrated_messages_per_second")
            .help("Highest rate with p99 within the target on the replica's pinned cores")
            .labelNames("namespace", "cluster", "replica", "mode").register(registry);
        poolCalibration = Gauge.builder().name("queue_enterprise_cluster_calibrated_messages_per_second")
            .help("Highest rate (plain, or encrypted: AES-128-CTR + Poly1305) with p99 within the bound, measured by the"
                + " calibration Job on the pool with the replicas' cores; absent when no rate held the bound")
            .labelNames("namespace", "cluster", "mode").register(registry);
        poolCalibrationVerdict = Gauge.builder().name("queue_enterprise_cluster_calibration_verdict")
            .help("1 for the calibration Job's verdict (ok, unreachable: no rate held the bound, time-limit), 0 for the others")
            .labelNames("namespace", "cluster", "verdict").register(registry);
        perCluster = List.of(reconciliations, failovers, failoverSeconds, term, condition, conditionReason, durableIndex, lag,
            calibration, poolCalibration, poolCalibrationVerdict);
    }

    /** A QueueCluster was deleted: every series of it goes, and nothing publishes them again for that cluster. */
    public void forget(String namespace, String name, String uid) {
        if (uid != null) {
            deletedUids.add(uid);
        }
        Function<List<String>, Boolean> ofCluster = labels -> labels.get(0).equals(namespace) && labels.get(1).equals(name);
        perCluster.forEach(metric -> metric.removeIf(ofCluster));
        observedFailoverTerms.remove(List.of(namespace, name));
        publishedReasons.keySet().removeIf(key -> key.get(0).equals(namespace) && key.get(1).equals(name));
    }

    private boolean deleted(QueueCluster cluster) {
        String uid = cluster.getMetadata().getUid();
        return uid != null && deletedUids.contains(uid);
    }

    void reconciled(QueueCluster cluster, String result) {
        if (deleted(cluster)) {
            return;
        }
        reconciliations.labelValues(namespace(cluster), name(cluster), result).inc();
    }

    void failover(QueueCluster cluster) {
        if (deleted(cluster)) {
            return;
        }
        failovers.labelValues(namespace(cluster), name(cluster)).inc();
    }

    /** A failover completed (StatusModel.failoverCompletedNow): observed once per term, when its duration is known. */
    void failoverCompleted(QueueCluster cluster, LastFailover completed) {
        if (completed.getDurationSeconds() == null || completed.getTerm() == null || deleted(cluster)) {
            return;
        }
        long term = completed.getTerm();
        boolean[] first = {false};
        observedFailoverTerms.compute(List.of(namespace(cluster), name(cluster)), (key, before) -> {
            first[0] = before == null || before < term;
            return first[0] ? term : before;
        });
        if (first[0]) {
            failoverSeconds.labelValues(namespace(cluster), name(cluster)).observe(completed.getDurationSeconds());
        }
    }

    void publish(QueueCluster cluster, QueueClusterStatus status) {
        if (deleted(cluster)) {
            return;
        }
        String namespace = namespace(cluster);
        String name = name(cluster);
        removeReplicasNoLongerIn(namespace, name, status);
        term.labelValues(namespace, name).set(status.getTerm() == null ? 0 : status.getTerm());
        // exported at 0 before the first failover: increase() over a series that starts at 1 sees no increase
        failovers.labelValues(namespace, name);
        status.getConditions().forEach(c -> {
            condition.labelValues(namespace, name, c.getType()).set("True".equals(c.getStatus()) ? 1 : 0);
            publishReason(namespace, name, c.getType(), c.getReason());
        });
        publishCalibration(namespace, name, status.getCalibration());
        for (ReplicaStatus replica : status.getReplicas()) {
            for (QueueProgress queue : replica.getQueues()) {
                if (queue.getDurableIndex() != null) {
                    durableIndex.labelValues(namespace, name, replica.getName(), queue.getName()).set(queue.getDurableIndex());
                }
                if (queue.getLagExcerpts() != null) {
                    lag.labelValues(namespace, name, replica.getName(), queue.getName()).set(queue.getLagExcerpts());
                }
            }
            Calibration measured = replica.getCalibration();
            if (measured != null && measured.getPlainMessagesPerSecond() != null) {
                calibration.labelValues(namespace, name, replica.getName(), "plain").set(measured.getPlainMessagesPerSecond());
            }
            if (measured != null && measured.getEncryptedMessagesPerSecond() != null) {
                calibration.labelValues(namespace, name, replica.getName(), "encrypted").set(measured.getEncryptedMessagesPerSecond());
            }
        }
    }

    /** A replica scaled away or a queue removed: its series go rather than keep their last value for ever. */
    private void removeReplicasNoLongerIn(String namespace, String name, QueueClusterStatus status) {
        Set<String> replicas = new HashSet<>();
        Set<List<String>> queues = new HashSet<>();
        for (ReplicaStatus replica : status.getReplicas()) {
            replicas.add(replica.getName());
            replica.getQueues().forEach(queue -> queues.add(List.of(replica.getName(), queue.getName())));
        }
        Function<List<String>, Boolean> goneQueue = labels -> labels.get(0).equals(namespace) && labels.get(1).equals(name)
            && !queues.contains(List.of(labels.get(2), labels.get(3)));
        durableIndex.removeIf(goneQueue);
        lag.removeIf(goneQueue);
        calibration.removeIf(labels -> labels.get(0).equals(namespace) && labels.get(1).equals(name) && !replicas.contains(labels.get(2)));
    }

    private void publishReason(String namespace, String name, String type, String reason) {
        if (reason == null) {
            return;
        }
        String previous = publishedReasons.put(List.of(namespace, name, type), reason);
        if (previous != null && !previous.equals(reason)) {
            conditionReason.remove(namespace, name, type, previous);
        }
        conditionReason.labelValues(namespace, name, type, reason).set(1);
    }

    private void publishCalibration(String namespace, String name, CalibrationStatus job) {
        if (job == null || job.getResult() == null) {
            return;
        }
        Calibration result = job.getResult();
        rate(namespace, name, "plain", result.getPlainMessagesPerSecond());
        rate(namespace, name, "encrypted", result.getEncryptedMessagesPerSecond());
        for (String verdict : VERDICTS) {
            poolCalibrationVerdict.labelValues(namespace, name, verdict).set(verdict.equals(result.getVerdict()) ? 1 : 0);
        }
    }

    /** An unreachable rate is no sample at all: a 0 would read as a measured rate of zero. */
    private void rate(String namespace, String name, String mode, Long rate) {
        if (rate == null) {
            poolCalibration.remove(namespace, name, mode);
        } else {
            poolCalibration.labelValues(namespace, name, mode).set(rate);
        }
    }

    private static String namespace(QueueCluster cluster) {
        return cluster.getMetadata().getNamespace();
    }

    private static String name(QueueCluster cluster) {
        return cluster.getMetadata().getName();
    }
}
