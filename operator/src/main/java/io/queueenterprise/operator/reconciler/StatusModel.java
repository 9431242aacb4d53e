package io.queueenterprise.operator.reconciler;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.Condition;
import io.queueenterprise.operator.api.Calibration;
import io.queueenterprise.operator.api.CalibrationStatus;
import io.queueenterprise.operator.api.FailoverStatus;
import io.queueenterprise.operator.api.LastFailover;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.QueueProgress;
import io.queueenterprise.operator.api.ReplicaStatus;
import io.queueenterprise.operator.failover.FailoverExecutor;
import io.queueenterprise.operator.failover.NodeStatusView;
import io.queueenterprise.operator.failover.ReplicaObservation;
import io.queueenterprise.operator.model.CalibrationJobModel;
import io.queueenterprise.operator.model.ClusterNames;
import io.queueenterprise.operator.model.NodeIdentityModel;
import io.queueenterprise.operator.model.QueueClusterModel;

/**
 * The status a reconcile writes, as a pure function of what it observed and did: per-replica progress, and the
 * Ready, Quorum, Pinned, Failover, ReplicasHealthy and Quarantined conditions ({@link ReplicaHealth}). Pinning is judged from each node's own report of its
 * {@code Cpus_allowed_list} (docs/operator.md): a replica got exclusive cores when its cpuset has exactly the whole
 * cores it requested (a kubelet without the static policy grants the whole shared pool instead).
 */
public final class StatusModel {
    private static final Pattern WHOLE_CORES = Pattern.compile("[1-9][0-9]*");

    private StatusModel() {
    }

    /**
     * @param tunedNodes   nodes matching the pinned pods' node selector (tuned pool, static policy label)
     * @param outcome      what the failover step did this reconcile
     * @param calibrations per replica, its pod's calibration at first start or the node's published one, when there is one
     */
    public static QueueClusterStatus build(QueueCluster cluster, QueueClusterStatus previous, List<String> replicas,
                                           Map<String, ReplicaObservation> observations, FailoverExecutor.Outcome outcome,
                                           int tunedNodes, Map<String, Calibration> calibrations, String now) {
        return build(cluster, previous, replicas, observations, outcome, tunedNodes, calibrations, previous.getCalibration(), now);
    }

    /** @param calibrationJob the calibration Job's progress or result ({@link CalibrationProgress}), null if never asked */
    public static QueueClusterStatus build(QueueCluster cluster, QueueClusterStatus previous, List<String> replicas,
                                           Map<String, ReplicaObservation> observations, FailoverExecutor.Outcome outcome,
                                           int tunedNodes, Map<String, Calibration> calibrations,
                                           CalibrationStatus calibrationJob, String now) {
        return build(cluster, previous, replicas, observations, outcome, tunedNodes, calibrations, calibrationJob,
            identities(cluster, previous, replicas, observations), now);
    }

    /** @param identities the replicas' identity pins after this reconcile ({@link #identities}) */
    public static QueueClusterStatus build(QueueCluster cluster, QueueClusterStatus previous, List<String> replicas,
                                           Map<String, ReplicaObservation> observations, FailoverExecutor.Outcome outcome,
                                           int tunedNodes, Map<String, Calibration> calibrations,
                                           CalibrationStatus calibrationJob, NodeIdentityModel.Plan identities, String now) {
        long generation = cluster.getMetadata().getGeneration() == null ? 0 : cluster.getMetadata().getGeneration();
        QueueClusterStatus status = new QueueClusterStatus();
        status.setObservedGeneration(generation);
        status.setTerm(Math.max(previous.getTerm() == null ? 0 : previous.getTerm(), outcome.term()));
        status.setLeader(outcome.leaderInPlace() ? outcome.leader() : previous.getLeader());
        boolean failoverInProgress = previous.getFailover() != null && previous.getFailover().getPhase() != FailoverStatus.Phase.COMPLETED;
        status.setFailover(failover(previous.getFailover(), outcome));
        status.setLastFailover(failoverInProgress && status.getFailover().getPhase() == FailoverStatus.Phase.COMPLETED
            ? lastFailover(status.getFailover(), previous.getLastFailover(), now) : previous.getLastFailover());
        status.setCalibration(calibrationJob);
        NodeStatusView leader = outcome.leaderInPlace() && observations.get(outcome.leader()) instanceof ReplicaObservation.Reachable l
            ? l.status() : null;
        List<ReplicaStatus> replicaStatuses = new ArrayList<>();
        List<ReplicaHealth.Problem> problems = new ArrayList<>();
        int reachable = 0;
        for (String replica : replicas) {
            ReplicaStatus replicaStatus = new ReplicaStatus();
            replicaStatus.setName(replica);
            replicaStatus.setCalibration(calibrations.get(replica));
            replicaStatus.setIdentityKey(identities.pins().get(replica));
            if (observations.get(replica) instanceof ReplicaObservation.Reachable answer) {
                reachable++;
                NodeStatusView node = answer.status();
                replicaStatus.setRole(node.role());
                replicaStatus.setTerm(node.term());
                replicaStatus.setCpusAllowedList(node.cpusAllowedList());
                replicaStatus.setExclusiveCores(exclusive(cluster, node.cpusAllowedList()));
                for (NodeStatusView.Queue queue : node.queues()) {
                    QueueProgress progress = new QueueProgress(queue.name(), queue.state(), queue.durableIndex(),
                        lag(leader, replica, queue.name()));
                    progress.setDetail(queue.stateDetail().isEmpty() ? null : queue.stateDetail());
                    if (queue.quarantines() != null && queue.quarantines().count() > 0) {
                        progress.setQuarantines(queue.quarantines().count());
                        progress.setLastQuarantine(ReplicaHealth.lastQuarantine(queue.quarantines()));
                    }
                    replicaStatus.getQueues().add(progress);
                }
                replicaStatus.setTransportRestarts(node.transport() == null ? null : node.transport().restarts());
                List<ReplicaHealth.Problem> found = ReplicaHealth.problems(replica, node);
                replicaStatus.setProblems(found.isEmpty() ? null : found.stream().map(ReplicaHealth.Problem::message).toList());
                problems.addAll(found);
            } else {
                replicaStatus.setRole("UNREACHABLE");
            }
            replicaStatuses.add(replicaStatus);
        }
        status.setReplicas(replicaStatuses);

        List<Condition> conditions = new ArrayList<>();
        int majority = QueueClusterModel.majority(replicas.size());
        conditions.add(Conditions.of(Conditions.QUORUM, reachable >= majority, reachable >= majority ? "MajorityAnswers" : "NoQuorum",
            reachable + " of " + replicas.size() + " replicas answer on their admin endpoint; a majority is " + majority, generation));
        // a leader in place acknowledges only once it holds its lease (after a promotion, about the lease timeout later)
        boolean leaderAcknowledges = leader == null || leader.acknowledges();
        boolean ready = outcome.leaderInPlace() && outcome.problems().isEmpty() && reachable == replicas.size() && leaderAcknowledges;
        List<String> notReady = !outcome.problems().isEmpty() ? outcome.problems()
            : reachable < replicas.size() ? List.of(reachable + " of " + replicas.size() + " replicas answer")
            : !leaderAcknowledges ? List.of("leader " + outcome.leader() + " at term " + outcome.term()
                + " does not acknowledge appends yet (no leader lease: its term not confirmed by a majority, or none heard lately)")
            : List.of(reachable + " of " + replicas.size() + " replicas answer");
        conditions.add(Conditions.of(Conditions.READY, ready, ready ? "LeaderAndFollowersInPlace" : "NotReady",
            ready ? "leader " + outcome.leader() + " at term " + outcome.term() + ", every replica following, acknowledging"
                : String.join("; ", notReady), generation));
        conditions.add(pinned(cluster, replicaStatuses, tunedNodes, generation));
        FailoverStatus failover = status.getFailover();
        boolean failingOver = failover != null && failover.getPhase() != FailoverStatus.Phase.COMPLETED;
        conditions.add(Conditions.of(Conditions.FAILOVER, failingOver, failingOver ? "InProgress" : "NoFailoverInProgress",
            failover == null ? "no failover so far" : "term " + failover.getTerm() + ": " + failover.getFormerLeader() + " -> "
                + failover.getCandidate() + " (" + failover.getPhase() + ")", generation));
        conditions.add(ReplicaHealth.healthyCondition(problems, reachable, replicas.size(), generation));
        conditions.add(ReplicaHealth.quarantinedCondition(replicaStatuses, generation));
        conditions.add(identityCondition(identities, replicas, generation));
        if (calibrationJob == null && CalibrationJobModel.atFirstStart(cluster.getSpec())) {
            conditions.add(CalibrationProgress.firstStartCondition(
                (int) replicas.stream().filter(calibrations::containsKey).count(), replicas.size(), generation));
        } else {
            conditions.add(CalibrationProgress.condition(calibrationJob, generation));
        }
        status.setConditions(Conditions.merge(previous.getConditions(), conditions, now));
        return status;
    }

    private static FailoverStatus failover(FailoverStatus previous, FailoverExecutor.Outcome outcome) {
        if (previous != null && previous.getPhase() != FailoverStatus.Phase.COMPLETED && outcome.leaderInPlace()
            && previous.getTerm() != null && outcome.term() >= previous.getTerm()) {
            previous.setPhase(FailoverStatus.Phase.COMPLETED);
            previous.setCandidate(outcome.leader());
        }
        return previous;
    }

    /**
     * The failover that completed this reconcile, timed from {@code detectedAt} (the start of the reconcile that found
     * the leader lost) to {@code now} (this reconcile, whose status patch puts the new leader in status); a planned
     * switchover or a first election (no former leader) leaves the previous one. Without readable times (an older
     * operator's failover status) the duration is not known.
     */
    private static LastFailover lastFailover(FailoverStatus completed, LastFailover previous, String now) {
        if (Boolean.TRUE.equals(completed.getPlanned()) || completed.getFormerLeader() == null
            || completed.getFormerLeader().equals(completed.getCandidate())) {
            return previous;
        }
        return new LastFailover(seconds(completed.getDetectedAt(), now), now, completed.getFormerLeader(),
            completed.getCandidate(), completed.getTerm());
    }

    /** Milliseconds' precision; null when either time is missing or not RFC 3339. */
    static Double seconds(String from, String to) {
        if (from == null || to == null) {
            return null;
        }
        try {
            return Duration.between(Instant.parse(from), Instant.parse(to)).toMillis() / 1000.0;
        } catch (DateTimeParseException unreadable) {
            return null;
        }
    }

    /** The failover {@code status} completed after {@code previous} (what the reconcile read), or null: once per term. */
    public static LastFailover failoverCompletedNow(QueueClusterStatus previous, QueueClusterStatus status) {
        LastFailover last = status.getLastFailover();
        LastFailover before = previous.getLastFailover();
        return last != null && (before == null || !java.util.Objects.equals(before.getTerm(), last.getTerm())) ? last : null;
    }

    private static Long lag(NodeStatusView leader, String replica, String queue) {
        if (leader == null) {
            return null;
        }
        if (leader.nodeId().equals(replica)) {
            return 0L;
        }
        return leader.queues().stream().filter(q -> q.name().equals(queue)).flatMap(q -> q.peers().stream())
            .filter(peer -> peer.nodeId().equals(replica)).map(NodeStatusView.Peer::lagExcerpts).findFirst().orElse(null);
    }

    /** Null when not judged (not pinned, or not reported). */
    static Boolean exclusive(QueueCluster cluster, String cpusAllowedList) {
        String cores = cluster.getSpec().getCoresPerReplica();
        if (!Boolean.TRUE.equals(cluster.getSpec().getPinned()) || cpusAllowedList == null || !WHOLE_CORES.matcher(cores).matches()) {
            return null;
        }
        try {
            BitSet granted = CpuSet.parse(cpusAllowedList);
            return granted.cardinality() == Integer.parseInt(cores);
        } catch (IllegalArgumentException unreadable) {
            return false;
        }
    }

    private static Condition pinned(QueueCluster cluster, List<ReplicaStatus> replicas, int tunedNodes, long generation) {
        if (!Boolean.TRUE.equals(cluster.getSpec().getPinned())) {
            return Conditions.of(Conditions.PINNED, false, "NotRequested", "spec.pinned is false", generation);
        }
        if (tunedNodes == 0) {
            return Conditions.of(Conditions.PINNED, false, "NoTunedNode", "no node is labelled "
                + ClusterNames.TUNED_NODE_LABEL + "=" + ClusterNames.TUNED_NODE_VALUE + " and matches the node pool's selector:"
                + " pinned replicas cannot be scheduled (docs/operator.md: preparing a tuned node pool)", generation);
        }
        List<String> shared = new ArrayList<>();
        List<String> unreported = new ArrayList<>();
        for (ReplicaStatus replica : replicas) {
            if (replica.getExclusiveCores() == null) {
                unreported.add(replica.getName());
            } else if (!replica.getExclusiveCores()) {
                shared.add(replica.getName() + " got cpus " + replica.getCpusAllowedList());
            }
        }
        if (!shared.isEmpty()) {
            return Conditions.of(Conditions.PINNED, false, "CoresNotExclusive", String.join(", ", shared) + " for "
                + cluster.getSpec().getCoresPerReplica() + " requested whole core(s): the node's kubelet did not grant"
                + " exclusive cores (static CPU manager policy?)", generation);
        }
        if (!unreported.isEmpty()) {
            return Conditions.unknown(Conditions.PINNED, "NotReported", String.join(", ", unreported)
                + " did not report Cpus_allowed_list on its admin endpoint", generation);
        }
        return Conditions.of(Conditions.PINNED, true, "ExclusiveCores", "every replica holds "
            + cluster.getSpec().getCoresPerReplica() + " exclusive core(s) on " + tunedNodes + " tuned node(s)", generation);
    }

    /**
     * The replicas' identity pins after this reconcile: those {@code previous} recorded, the keys reachable replicas
     * report now, and the QueueCluster's {@link NodeIdentityModel#ROTATE_ANNOTATION}.
     */
    public static NodeIdentityModel.Plan identities(QueueCluster cluster, QueueClusterStatus previous, List<String> replicas,
                                                    Map<String, ReplicaObservation> observations) {
        Map<String, String> pinned = new LinkedHashMap<>();
        if (previous.getReplicas() != null) {
            for (ReplicaStatus replica : previous.getReplicas()) {
                if (replica.getIdentityKey() != null) {
                    pinned.put(replica.getName(), replica.getIdentityKey());
                }
            }
        }
        Map<String, String> reported = new LinkedHashMap<>();
        observations.forEach((replica, observation) -> {
            if (observation instanceof ReplicaObservation.Reachable answer && answer.status().identityKey() != null) {
                reported.put(replica, answer.status().identityKey());
            }
        });
        Map<String, String> annotations = cluster.getMetadata().getAnnotations();
        return NodeIdentityModel.plan(replicas, pinned, reported,
            annotations == null ? null : annotations.get(NodeIdentityModel.ROTATE_ANNOTATION));
    }

    /**
     * NodeIdentityMismatch: True while a replica reports a key other than its pin (its peers refuse it); False
     * otherwise, its message saying how many replicas are pinned and any rotation pending or naming no replica.
     */
    private static Condition identityCondition(NodeIdentityModel.Plan identities, List<String> replicas, long generation) {
        List<String> notes = new ArrayList<>();
        if (identities.unknownRotation() != null) {
            notes.add("annotation " + NodeIdentityModel.ROTATE_ANNOTATION + "=" + identities.unknownRotation()
                + " names no replica of this cluster (" + String.join(", ", replicas) + "): nothing rotated");
        }
        if (identities.rotating() != null && identities.rotated() == null) {
            notes.add("rotation of " + identities.rotating() + " pending: its next reported key other than its pin "
                + NodeIdentityModel.fingerprint(identities.pins().getOrDefault(identities.rotating(), "")) + " replaces the pin");
        }
        if (!identities.mismatches().isEmpty()) {
            List<String> messages = new ArrayList<>(identities.mismatches().stream().map(NodeIdentityModel.Mismatch::message).toList());
            messages.addAll(notes);
            return Conditions.of(Conditions.NODE_IDENTITY_MISMATCH, true, "KeyDiffersFromPin", String.join("; ", messages), generation);
        }
        List<String> unpinned = replicas.stream().filter(r -> !identities.pins().containsKey(r)).toList();
        String pinned = identities.pins().size() + " of " + replicas.size() + " replicas pinned"
            + (unpinned.isEmpty() ? "" : " (" + String.join(", ", unpinned) + " not reported yet)");
        notes.add(0, pinned);
        String reason = identities.unknownRotation() != null ? "UnknownRotateNode" : unpinned.isEmpty() ? "AllPinned" : "NotAllPinned";
        return Conditions.of(Conditions.NODE_IDENTITY_MISMATCH, false, reason, String.join("; ", notes), generation);
    }

    /** Replica names of a cluster, in ordinal order. */
    public static List<String> replicas(QueueCluster cluster) {
        ClusterNames names = ClusterNames.of(cluster);
        List<String> replicas = new ArrayList<>();
        for (int ordinal = 0; ordinal < cluster.getSpec().getReplicas(); ordinal++) {
            replicas.add(names.replica(ordinal));
        }
        return replicas;
    }

    /** Exposed for FailoverPlanner's callers: queue names in configuration order. */
    public static List<String> queues(QueueCluster cluster) {
        return cluster.getSpec().getQueues().stream().map(q -> q.getName()).toList();
    }

}
