package io.queueenterprise.operator.reconciler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.queueenterprise.operator.api.Calibration;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.FailoverStatus;
import io.queueenterprise.operator.api.LastFailover;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.failover.FailoverExecutor;
import io.queueenterprise.operator.failover.NodeStatusView;
import io.queueenterprise.operator.failover.ReplicaObservation;
import io.queueenterprise.operator.model.NodeIdentityModel;

/** The status a reconcile writes, from observations, without a cluster. */
@org.junit.jupiter.api.Tag("unit")
class StatusModelTest {
    private static final List<String> REPLICAS = List.of("q-0", "q-1", "q-2");

    /** One queue, {@code cores} per replica (ReplicaHealthTest too). */
    static QueueCluster cluster(String cores) {
        QueueDefinition queue = new QueueDefinition();
        queue.setName("orders");
        queue.setRollCycle(RollCycle.FAST_HOURLY);
        queue.setEncryption(Encryption.NONE);
        QueueClusterSpec spec = new QueueClusterSpec();
        spec.setQueues(List.of(queue));
        spec.setCoresPerReplica(cores);
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName("q").withNamespace("ns").withGeneration(7L).build());
        cluster.setSpec(spec);
        return cluster;
    }

    private static ReplicaObservation node(String name, String role, String leader, long durable, String cpus,
                                           List<NodeStatusView.Peer> peers) {
        return new ReplicaObservation.Reachable(name, new NodeStatusView(name, role, 3, leader,
            List.of(new NodeStatusView.Queue("orders", "LIVE", durable, durable, -1, 0, peers, 0, 0)), cpus));
    }

    private static Map<String, ReplicaObservation> healthy(String cpus0, String cpus1, String cpus2) {
        Map<String, ReplicaObservation> observations = new LinkedHashMap<>();
        observations.put("q-0", node("q-0", "LEADER", "q-0", 100, cpus0, List.of(
            new NodeStatusView.Peer("q-1", true, 98, 2, 1000, "LIVE"), new NodeStatusView.Peer("q-2", true, 90, 10, 5000, "LIVE"))));
        observations.put("q-1", node("q-1", "FOLLOWER", "q-0", 98, cpus1, List.of()));
        observations.put("q-2", node("q-2", "FOLLOWER", "q-0", 90, cpus2, List.of()));
        return observations;
    }

    private static Condition condition(QueueClusterStatus status, String type) {
        return status.getConditions().stream().filter(c -> c.getType().equals(type)).findFirst().orElseThrow();
    }

    private static final FailoverExecutor.Outcome STEADY = new FailoverExecutor.Outcome("q-0", 3, true, List.of());

    @Test
    void aHealthyPinnedClusterIsReadyAndPinnedWithLagFromTheLeader() {
        QueueClusterStatus status = StatusModel.build(cluster("1"), new QueueClusterStatus(), REPLICAS,
            healthy("1", "2", "3"), STEADY, 3, Map.of(), "2026-11-22T16:00:00Z");
        assertEquals(7L, status.getObservedGeneration());
        assertEquals("q-0", status.getLeader());
        assertEquals(3L, status.getTerm());
        assertEquals("True", condition(status, Conditions.READY).getStatus());
        assertEquals("True", condition(status, Conditions.QUORUM).getStatus());
        assertEquals("True", condition(status, Conditions.PINNED).getStatus(), condition(status, Conditions.PINNED).getMessage());
        assertEquals(List.of(0L, 2L, 10L), status.getReplicas().stream().map(r -> r.getQueues().get(0).getLagExcerpts()).toList());
        assertEquals(List.of(100L, 98L, 90L), status.getReplicas().stream().map(r -> r.getQueues().get(0).getDurableIndex()).toList());
    }

    @Test
    void aLeaderThatDoesNotAcknowledgeYetLeavesTheClusterNotReadyAndSaysWhy() {
        Map<String, ReplicaObservation> observations = healthy("1", "2", "3");
        NodeStatusView leader = ((ReplicaObservation.Reachable) observations.get("q-0")).status();
        NodeStatusView justPromoted = new NodeStatusView(leader.nodeId(), leader.role(), leader.term(), leader.leaderNodeId(),
            leader.queues(), leader.cpusAllowedList(), null, null, List.of(), new NodeStatusView.Lease(false, true, false, 2000));
        observations.put("q-0", new ReplicaObservation.Reachable("q-0", justPromoted));
        Condition ready = condition(StatusModel.build(cluster("1"), new QueueClusterStatus(), REPLICAS, observations, STEADY, 3,
            Map.of(), "now"), Conditions.READY);
        assertEquals("False", ready.getStatus());
        assertTrue(ready.getMessage().contains("leader q-0 at term 3 does not acknowledge appends yet"), ready.getMessage());

        NodeStatusView acknowledging = new NodeStatusView(leader.nodeId(), leader.role(), leader.term(), leader.leaderNodeId(),
            leader.queues(), leader.cpusAllowedList(), null, null, List.of(), new NodeStatusView.Lease(true, true, true, 2000));
        observations.put("q-0", new ReplicaObservation.Reachable("q-0", acknowledging));
        assertEquals("True", condition(StatusModel.build(cluster("1"), new QueueClusterStatus(), REPLICAS, observations, STEADY, 3,
            Map.of(), "now"), Conditions.READY).getStatus());
    }

    @Test
    void aReplicaOnTheSharedPoolIsNotPinned() {
        // a kubelet without the static policy gives a Guaranteed pod the whole shared pool: 0-1 for 1 core
        QueueClusterStatus status = StatusModel.build(cluster("1"), new QueueClusterStatus(), REPLICAS,
            healthy("1", "0-1", "1"), STEADY, 3, Map.of(), "now");
        Condition pinned = condition(status, Conditions.PINNED);
        assertEquals("False", pinned.getStatus());
        assertEquals("CoresNotExclusive", pinned.getReason());
        assertTrue(pinned.getMessage().contains("q-1 got cpus 0-1"), pinned.getMessage());
    }

    @Test
    void twoCoresMeanTwoCpusInTheSet() {
        assertEquals(true, StatusModel.exclusive(cluster("2"), "2-3"));
        assertEquals(false, StatusModel.exclusive(cluster("2"), "2"));
        assertEquals(false, StatusModel.exclusive(cluster("2"), "garbage"));
        assertNull(StatusModel.exclusive(cluster("2"), null));
    }

    @Test
    void noTunedNodeSaysSo() {
        Condition pinned = condition(StatusModel.build(cluster("1"), new QueueClusterStatus(), REPLICAS,
            healthy("1", "2", "3"), STEADY, 0, Map.of(), "now"), Conditions.PINNED);
        assertEquals("NoTunedNode", pinned.getReason());
        assertTrue(pinned.getMessage().contains("queue-enterprise.io/cpu-manager-policy=static"), pinned.getMessage());
    }

    @Test
    void unreportedCpusAreUnknownAndUnpinnedClustersAreNotJudged() {
        assertEquals("Unknown", condition(StatusModel.build(cluster("1"), new QueueClusterStatus(), REPLICAS,
            healthy("1", null, "3"), STEADY, 3, Map.of(), "now"), Conditions.PINNED).getStatus());
        QueueCluster unpinned = cluster("500m");
        unpinned.getSpec().setPinned(false);
        assertEquals("NotRequested", condition(StatusModel.build(unpinned, new QueueClusterStatus(), REPLICAS,
            healthy("0-1", "0-1", "0-1"), STEADY, 3, Map.of(), "now"), Conditions.PINNED).getReason());
    }

    @Test
    void withoutAMajorityThereIsNoQuorumAndTheTransitionTimeMovesOnlyOnChange() {
        Map<String, ReplicaObservation> observations = new LinkedHashMap<>(healthy("1", "2", "3"));
        QueueClusterStatus first = StatusModel.build(cluster("1"), new QueueClusterStatus(), REPLICAS, observations, STEADY, 3,
            Map.of(), "t1");
        observations.put("q-1", new ReplicaObservation.Lost("q-1", "pod q-1 not found"));
        observations.put("q-2", new ReplicaObservation.Lost("q-2", "pod q-2 not found"));
        FailoverExecutor.Outcome noQuorum = new FailoverExecutor.Outcome(null, 0, false, List.of("no majority"));
        QueueClusterStatus second = StatusModel.build(cluster("1"), first, REPLICAS, observations, noQuorum, 3, Map.of(), "t2");
        assertEquals("False", condition(second, Conditions.QUORUM).getStatus());
        assertEquals("t2", condition(second, Conditions.QUORUM).getLastTransitionTime());
        assertEquals("False", condition(second, Conditions.READY).getStatus());
        assertEquals("q-0", second.getLeader(), "the recorded leader stays recorded until replaced");
        assertEquals(3L, second.getTerm(), "a term is never lowered");
        QueueClusterStatus third = StatusModel.build(cluster("1"), second, REPLICAS, observations, noQuorum, 3, Map.of(), "t3");
        assertEquals("t2", condition(third, Conditions.QUORUM).getLastTransitionTime());
        assertEquals("UNREACHABLE", third.getReplicas().get(1).getRole());
    }

    @Test
    void calibrationFiguresArePublishedPerReplica() {
        Calibration measured = new Calibration();
        measured.setPlainMessagesPerSecond(1_200_000L);
        measured.setEncryptedMessagesPerSecond(700_000L);
        measured.setP99TargetMicros(10L);
        QueueClusterStatus status = StatusModel.build(cluster("1"), new QueueClusterStatus(), REPLICAS, healthy("1", "2", "3"),
            STEADY, 3, Map.of("q-1", measured), "now");
        assertEquals(700_000L, status.getReplicas().get(1).getCalibration().getEncryptedMessagesPerSecond());
        assertNull(status.getReplicas().get(0).getCalibration());
    }

    @Test
    void cpuListsParseOrSayWhatIsWrong() {
        assertEquals(5, CpuSet.parse("0,2-4,7").cardinality());
        assertEquals("not a cpu list: \"3-1\"", assertThrows(IllegalArgumentException.class, () -> CpuSet.parse("3-1")).getMessage());
    }

    private static QueueClusterStatus failingOver(boolean planned) {
        FailoverStatus failover = new FailoverStatus();
        failover.setPhase(FailoverStatus.Phase.PROMOTING);
        failover.setTerm(4L);
        failover.setFormerLeader("q-0");
        failover.setCandidate("q-1");
        failover.setDetectedAt("2026-11-26T10:00:00.000Z");   // the reconcile that found q-0 lost began
        failover.setStartedAt("2026-11-26T10:00:00.300Z");    // its term write
        failover.setPlanned(planned ? Boolean.TRUE : null);
        QueueClusterStatus previous = new QueueClusterStatus();
        previous.setTerm(4L);
        previous.setLeader("q-0");
        previous.setFailover(failover);
        previous.setLastFailover(new LastFailover(1.5, "2026-11-25T08:00:00Z", "q-2", "q-0", 3L));
        return previous;
    }

    @Test
    void aFailoverIsTimedFromTheLeaderFoundLostToTheNewLeaderInStatusOnce() {
        FailoverExecutor.Outcome promoted = new FailoverExecutor.Outcome("q-1", 4, true, List.of());
        QueueClusterStatus previous = failingOver(false);
        QueueClusterStatus completed = StatusModel.build(cluster("1"), previous, REPLICAS, healthy("1", "2", "3"), promoted, 3,
            Map.of(), "2026-11-26T10:00:00.810Z");
        LastFailover last = completed.getLastFailover();
        assertEquals(0.81, last.getDurationSeconds(), 1e-9, "from detectedAt, not from the term write");
        assertEquals("2026-11-26T10:00:00.810Z", last.getAt());
        assertEquals(List.of("q-0", "q-1", 4L), List.of(last.getFrom(), last.getTo(), last.getTerm()));
        assertSame(last, StatusModel.failoverCompletedNow(previous, completed));

        QueueClusterStatus later = StatusModel.build(cluster("1"), completed, REPLICAS, healthy("1", "2", "3"), promoted, 3,
            Map.of(), "2026-11-26T10:00:10.810Z");
        assertEquals(0.81, later.getLastFailover().getDurationSeconds(), 1e-9, "kept, not timed again");
        assertNull(StatusModel.failoverCompletedNow(completed, later), "completed once");
    }

    @Test
    void aPlannedSwitchoverOrUnreadableTimesDoNotPassForAMeasuredFailover() {
        FailoverExecutor.Outcome promoted = new FailoverExecutor.Outcome("q-1", 4, true, List.of());
        QueueClusterStatus previous = failingOver(true);
        QueueClusterStatus switchedOver = StatusModel.build(cluster("1"), previous, REPLICAS, healthy("1", "2", "3"), promoted, 3,
            Map.of(), "2026-11-26T10:00:05Z");
        assertEquals(3L, switchedOver.getLastFailover().getTerm(), "the last failover is still the one at term 3");
        assertNull(StatusModel.failoverCompletedNow(previous, switchedOver));

        QueueClusterStatus olderOperator = failingOver(false);
        olderOperator.getFailover().setDetectedAt(null);   // written by an operator that did not record it
        QueueClusterStatus untimed = StatusModel.build(cluster("1"), olderOperator, REPLICAS, healthy("1", "2", "3"), promoted, 3,
            Map.of(), "2026-11-26T10:00:05Z");
        assertEquals(4L, untimed.getLastFailover().getTerm());
        assertNull(untimed.getLastFailover().getDurationSeconds(), "not known, not guessed");
    }

    @Test
    void theFailoverHistogramObservesEachTermOnceEvenWhenAReconcileIsRetried() {
        PrometheusRegistry registry = new PrometheusRegistry();
        OperatorMetrics metrics = new OperatorMetrics(registry);
        QueueCluster cluster = cluster("1");
        metrics.failoverCompleted(cluster, new LastFailover(0.81, "a", "q-0", "q-1", 4L));
        metrics.failoverCompleted(cluster, new LastFailover(1.8, "b", "q-0", "q-1", 4L));   // retried after a 409
        metrics.failoverCompleted(cluster, new LastFailover(0.95, "c", "q-1", "q-2", 5L));
        HistogramSnapshot histogram = (HistogramSnapshot) registry.scrape().stream()
            .filter(m -> m.getMetadata().getPrometheusName().equals("queue_enterprise_operator_failover_seconds")).findFirst().orElseThrow();
        HistogramSnapshot.HistogramDataPointSnapshot q = histogram.getDataPoints().get(0);
        assertEquals(2, q.getCount());
        assertEquals(0.81 + 0.95, q.getSum(), 1e-9);
    }

    private static final String KEY_0 = "8FBvMmmDXGuOl73jPyBP8QJxXJSYolsF6peAUF0OCqc=";
    private static final String KEY_1 = "A/04YEgGqj60Vnsyie3MqfvmaA1FBD5yw9imA3YehNs=";
    private static final String KEY_2 = "bjc6d3Slg34uCooovdWEAceZzMcA/OnqzdnOtHh6ub0=";

    /** {@code GET /admin/status} as the node reports it, with or without the identity (an older node). */
    private static ReplicaObservation answering(String name, String role, String identityJson) throws Exception {
        String json = "{\"nodeId\":\"" + name + "\",\"role\":\"" + role + "\",\"term\":3,\"leaderNodeId\":\"q-0\","
            + "\"queues\":[{\"name\":\"orders\",\"state\":\"LIVE\",\"durableIndex\":5}]"
            + (identityJson == null ? "" : ",\"identity\":" + identityJson) + "}";
        return new ReplicaObservation.Reachable(name, new ObjectMapper().readValue(json, NodeStatusView.class));
    }

    private static String identity(String key) {
        return "{\"publicKey\":\"" + key + "\",\"fingerprint\":\"" + key.substring(0, 4) + "\",\"persistent\":true}";
    }

    @Test
    void theReportedIdentityIsReadAndAnOlderNodeWithoutOneIsTolerated() throws Exception {
        ReplicaObservation.Reachable reporting = (ReplicaObservation.Reachable) answering("q-0", "LEADER", identity(KEY_0));
        assertEquals(KEY_0, reporting.status().identityKey());
        assertTrue(reporting.status().identity().persistent());
        assertNull(((ReplicaObservation.Reachable) answering("q-1", "FOLLOWER", null)).status().identityKey());
    }

    @Test
    void theFirstReportedKeyIsKeptInStatusAndADifferentOneRaisesTheMismatchCondition() throws Exception {
        Map<String, ReplicaObservation> first = new LinkedHashMap<>();
        first.put("q-0", answering("q-0", "LEADER", identity(KEY_0)));
        first.put("q-1", answering("q-1", "FOLLOWER", identity(KEY_1)));
        first.put("q-2", answering("q-2", "FOLLOWER", null));   // an older node: stays unpinned
        QueueClusterStatus pinned = StatusModel.build(cluster("1"), new QueueClusterStatus(), REPLICAS, first, STEADY, 3,
            Map.of(), "2026-11-26T22:00:00Z");
        assertEquals(KEY_0, pinned.getReplicas().get(0).getIdentityKey());
        assertEquals(KEY_1, pinned.getReplicas().get(1).getIdentityKey());
        assertNull(pinned.getReplicas().get(2).getIdentityKey());
        Condition notAll = condition(pinned, Conditions.NODE_IDENTITY_MISMATCH);
        assertEquals("False", notAll.getStatus());
        assertEquals("NotAllPinned", notAll.getReason());
        assertTrue(notAll.getMessage().contains("q-2"), notAll.getMessage());

        // q-1 comes back with another key, q-0 unreachable: both pins kept, the mismatch named with both fingerprints
        Map<String, ReplicaObservation> later = new LinkedHashMap<>();
        later.put("q-0", new ReplicaObservation.Lost("q-0", "pod q-0 is Pending"));
        later.put("q-1", answering("q-1", "FOLLOWER", identity(KEY_2)));
        later.put("q-2", answering("q-2", "FOLLOWER", identity(KEY_2)));
        QueueClusterStatus mismatched = StatusModel.build(cluster("1"), pinned, REPLICAS, later, STEADY, 3, Map.of(),
            "2026-11-26T22:00:10Z");
        assertEquals(KEY_0, mismatched.getReplicas().get(0).getIdentityKey(), "an unreachable replica keeps its pin");
        assertEquals(KEY_1, mismatched.getReplicas().get(1).getIdentityKey(), "never re-pinned without the annotation");
        assertEquals(KEY_2, mismatched.getReplicas().get(2).getIdentityKey(), "first report pins");
        Condition mismatch = condition(mismatched, Conditions.NODE_IDENTITY_MISMATCH);
        assertEquals("True", mismatch.getStatus());
        assertEquals("KeyDiffersFromPin", mismatch.getReason());
        assertTrue(mismatch.getMessage().contains("q-1") && mismatch.getMessage().contains(NodeIdentityModel.fingerprint(KEY_1))
            && mismatch.getMessage().contains(NodeIdentityModel.fingerprint(KEY_2)), mismatch.getMessage());
        assertTrue(ClusterEvents.identities(StatusModel.identities(cluster("1"), pinned, REPLICAS, later)).stream()
            .anyMatch(e -> e.reason().equals("NodeIdentityMismatch") && e.type().equals("Warning")));

        // annotated: the next reconcile takes q-1's new key
        QueueCluster rotating = cluster("1");
        rotating.getMetadata().setAnnotations(Map.of(NodeIdentityModel.ROTATE_ANNOTATION, "q-1"));
        QueueClusterStatus rotated = StatusModel.build(rotating, mismatched, REPLICAS, later, STEADY, 3, Map.of(),
            "2026-11-26T22:00:20Z");
        assertEquals(KEY_2, rotated.getReplicas().get(1).getIdentityKey());
        assertEquals("AllPinned", condition(rotated, Conditions.NODE_IDENTITY_MISMATCH).getReason());
    }

    @Test
    void aRotateAnnotationNamingNoReplicaIsNamedInTheCondition() throws Exception {
        QueueCluster annotated = cluster("1");
        annotated.getMetadata().setAnnotations(Map.of(NodeIdentityModel.ROTATE_ANNOTATION, "q-9"));
        Map<String, ReplicaObservation> observations = new LinkedHashMap<>();
        for (String replica : REPLICAS) {
            observations.put(replica, answering(replica, "FOLLOWER", identity(KEY_0)));
        }
        Condition condition = condition(StatusModel.build(annotated, new QueueClusterStatus(), REPLICAS, observations, STEADY, 3,
            Map.of(), "2026-11-26T22:00:00Z"), Conditions.NODE_IDENTITY_MISMATCH);
        assertEquals("UnknownRotateNode", condition.getReason());
        assertTrue(condition.getMessage().contains("q-9"), condition.getMessage());
    }
}
