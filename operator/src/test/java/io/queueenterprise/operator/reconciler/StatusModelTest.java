package io.queueenterprise.operator.reconciler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.queueenterprise.operator.api.Calibration;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.failover.FailoverExecutor;
import io.queueenterprise.operator.failover.NodeStatusView;
import io.queueenterprise.operator.failover.ReplicaObservation;

/** The status a reconcile writes, from observations, without a cluster. */
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
}
