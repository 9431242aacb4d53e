package io.queueenterprise.operator.reconciler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.queueenterprise.operator.api.FailoverStatus;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.failover.FailoverExecutor;
import io.queueenterprise.operator.failover.NodeStatusView;
import io.queueenterprise.operator.failover.ReplicaObservation;

/** Which Events a status calls for, and that one occurrence keeps one key over the reconciles that see it. */
@org.junit.jupiter.api.Tag("unit")
class ClusterEventsTest {
    private static final List<String> REPLICAS = List.of("q-0", "q-1", "q-2");

    private static Map<String, ReplicaObservation> nodes(String leader, long term, NodeStatusView.Quarantines quarantines,
                                                         NodeStatusView.Transport q1Transport) {
        Map<String, ReplicaObservation> observations = new LinkedHashMap<>();
        for (String replica : REPLICAS) {
            NodeStatusView.Queue orders = new NodeStatusView.Queue("orders", "LIVE", 5, 5, 5, 0, List.of(), 0, 0, "", null,
                replica.equals("q-2") ? quarantines : null);
            observations.put(replica, new ReplicaObservation.Reachable(replica, new NodeStatusView(replica,
                replica.equals(leader) ? "LEADER" : "FOLLOWER", term, leader, List.of(orders), null, null,
                replica.equals("q-1") ? q1Transport : null, List.of())));
        }
        return observations;
    }

    private static QueueClusterStatus reconcile(QueueClusterStatus previous, Map<String, ReplicaObservation> observations,
                                                FailoverExecutor.Outcome outcome, String now) {
        return StatusModel.build(StatusModelTest.cluster("1"), previous, REPLICAS, observations, outcome, 0, Map.of(), now);
    }

    /** The events a reconcile that read {@code previous} and built {@code status} writes. */
    private static List<ClusterEvents.ClusterEvent> eventsOf(QueueClusterStatus previous, QueueClusterStatus status) {
        return ClusterEvents.of(previous, status);
    }

    private static List<String> reasons(QueueClusterStatus previous, QueueClusterStatus status) {
        return eventsOf(previous, status).stream().map(ClusterEvents.ClusterEvent::reason).toList();
    }

    private static ClusterEvents.ClusterEvent event(QueueClusterStatus previous, QueueClusterStatus status, String reason) {
        return eventsOf(previous, status).stream().filter(e -> e.reason().equals(reason)).findFirst().orElseThrow();
    }

    @Test
    void aLeaderInPlaceIsAnnouncedOncePerTermAndAFailoverNamesWhomItReplaced() {
        FailoverExecutor.Outcome term3 = new FailoverExecutor.Outcome("q-0", 3, true, List.of());
        QueueClusterStatus first = reconcile(new QueueClusterStatus(), nodes("q-0", 3, null, null), term3, "t1");
        QueueClusterStatus second = reconcile(first, nodes("q-0", 3, null, null), term3, "t2");
        assertEquals(List.of("LeaderElected", "ReplicasHealthy"), reasons(new QueueClusterStatus(), first));
        assertEquals(List.of(event(new QueueClusterStatus(), first, "LeaderElected")), eventsOf(first, second),
            "the same term, the same key (written once); no transition, no health event");
        assertEquals("q-0 leads at term 3", event(new QueueClusterStatus(), first, "LeaderElected").message());

        FailoverStatus failover = new FailoverStatus();
        failover.setTerm(4L);
        failover.setFormerLeader("q-0");
        failover.setCandidate("q-1");
        failover.setPhase(FailoverStatus.Phase.PROMOTING);
        second.setFailover(failover);
        QueueClusterStatus afterFailover = reconcile(second, nodes("q-1", 4, null, null),
            new FailoverExecutor.Outcome("q-1", 4, true, List.of()), "t3");
        ClusterEvents.ClusterEvent elected = event(second, afterFailover, "LeaderElected");
        assertEquals("q-1 leads at term 4, taking over from q-0", elected.message());
        assertNotEquals(event(new QueueClusterStatus(), first, "LeaderElected").key(), elected.key());
    }

    @Test
    void aLeaderNotYetAnsweringAsLeaderIsNotAnnounced() {
        Map<String, ReplicaObservation> observations = nodes("q-0", 3, null, null);
        observations.put("q-0", new ReplicaObservation.Lost("q-0", "pod q-0 not found"));
        QueueClusterStatus status = reconcile(new QueueClusterStatus(), observations,
            new FailoverExecutor.Outcome("q-0", 3, true, List.of()), "t1");
        List<String> reasons = reasons(new QueueClusterStatus(), status);
        assertFalse(reasons.contains("LeaderElected"), reasons.toString());
    }

    @Test
    void replicasTurningUnhealthyWarnOncePerTransitionAndReason() {
        FailoverExecutor.Outcome steady = new FailoverExecutor.Outcome("q-0", 3, true, List.of());
        NodeStatusView.Transport down = new NodeStatusView.Transport(false, "Address already in use", 1, "driver closed", "t");
        QueueClusterStatus healthy = reconcile(new QueueClusterStatus(), nodes("q-0", 3, null, null), steady, "t1");
        QueueClusterStatus broken = reconcile(healthy, nodes("q-0", 3, null, down), steady, "t2");
        QueueClusterStatus stillBroken = reconcile(broken, nodes("q-0", 3, null, down), steady, "t3");
        QueueClusterStatus healedAgain = reconcile(stillBroken, nodes("q-0", 3, null, null), steady, "t4");
        QueueClusterStatus brokenAgain = reconcile(healedAgain, nodes("q-0", 3, null, down), steady, "t5");

        ClusterEvents.ClusterEvent warning = event(healthy, broken, "ReplicaProblem");
        assertEquals("Warning", warning.type());
        assertEquals("TransportDown: q-1: transport down: Address already in use", warning.message());
        assertFalse(reasons(broken, stillBroken).contains("ReplicaProblem"), "one transition, one event");
        assertEquals("Normal", event(stillBroken, healedAgain, "ReplicasHealthy").type());
        assertNotEquals(event(new QueueClusterStatus(), healthy, "ReplicasHealthy").key(),
            event(stillBroken, healedAgain, "ReplicasHealthy").key());
        assertNotEquals(warning.key(), event(healedAgain, brokenAgain, "ReplicaProblem").key(), "a new transition, a new event");
    }

    /**
     * The failover's term write (StatusElectionRecorder) lands between a reconcile's read and its status patch: the
     * patch fails with 409 and the reconcile is retried a second later from the same persisted conditions. The
     * replicas turning healthy is one occurrence: one Event name, whichever of the two reconciles writes it.
     */
    @Test
    void aReconcileRetriedAfterAStatusConflictReportsTheSameTransitionUnderTheSameName() {
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName("orders").withNamespace("ns").withUid("u-1").build());
        FailoverExecutor.Outcome steady = new FailoverExecutor.Outcome("q-0", 3, true, List.of());
        NodeStatusView.Transport down = new NodeStatusView.Transport(false, "Address already in use", 1, "driver closed", "t");
        QueueClusterStatus persisted = reconcile(new QueueClusterStatus(), nodes("q-0", 3, null, down), steady,
            "2026-11-26T10:00:00Z");

        QueueClusterStatus conflicted = reconcile(persisted, nodes("q-0", 3, null, null), steady, "2026-11-26T10:00:10Z");
        // its patch is refused (409); the retry reads the same conditions again, one second later
        QueueClusterStatus retried = reconcile(persisted, nodes("q-0", 3, null, null), steady, "2026-11-26T10:00:11Z");
        QueueClusterStatus next = reconcile(retried, nodes("q-0", 3, null, null), steady, "2026-11-26T10:00:21Z");

        java.util.Set<String> names = new java.util.TreeSet<>();
        for (QueueClusterStatus[] reconciled : List.of(new QueueClusterStatus[] {persisted, conflicted},
            new QueueClusterStatus[] {persisted, retried}, new QueueClusterStatus[] {retried, next})) {
            eventsOf(reconciled[0], reconciled[1]).stream().filter(e -> e.reason().equals("ReplicasHealthy"))
                .forEach(e -> names.add(EventPublisher.eventName(cluster, e.key())));
        }
        assertEquals(1, names.size(), "one transition to healthy, one Event name: " + names);
    }

    @Test
    void aNewReasonWhileUnhealthyWarnsAgainOnce() {
        FailoverExecutor.Outcome steady = new FailoverExecutor.Outcome("q-0", 3, true, List.of());
        NodeStatusView.Transport down = new NodeStatusView.Transport(false, "Address already in use", 1, "driver closed", "t");
        QueueClusterStatus healthy = reconcile(new QueueClusterStatus(), nodes("q-0", 3, null, null), steady, "t1");
        QueueClusterStatus transportDown = reconcile(healthy, nodes("q-0", 3, null, down), steady, "t2");
        Map<String, ReplicaObservation> corrupted = nodes("q-0", 3, null, null);
        NodeStatusView.Queue broken = new NodeStatusView.Queue("orders", "CORRUPTED", 5, 5, 5, 0, List.of(), 0, 0,
            "checksum mismatch", null, null);
        corrupted.put("q-2", new ReplicaObservation.Reachable("q-2", new NodeStatusView("q-2", "FOLLOWER", 3, "q-0",
            List.of(broken), null, null, null, List.of())));
        QueueClusterStatus queueBroken = reconcile(transportDown, corrupted, steady, "t3");
        QueueClusterStatus stillBroken = reconcile(queueBroken, corrupted, steady, "t4");

        assertEquals("False", queueBroken.getConditions().stream()
            .filter(c -> c.getType().equals(Conditions.REPLICAS_HEALTHY)).findFirst().orElseThrow().getStatus());
        ClusterEvents.ClusterEvent first = event(healthy, transportDown, "ReplicaProblem");
        ClusterEvents.ClusterEvent second = event(transportDown, queueBroken, "ReplicaProblem");
        assertTrue(second.message().startsWith("QueueNeedsAttention: "), second.message());
        assertNotEquals(first.key(), second.key(), "another reason, another event");
        assertFalse(reasons(queueBroken, stillBroken).contains("ReplicaProblem"), "the same reason: no new event");
    }

    @Test
    void eachQuarantineFolderWarnsOnce() {
        FailoverExecutor.Outcome steady = new FailoverExecutor.Outcome("q-0", 3, true, List.of());
        NodeStatusView.Quarantines one = new NodeStatusView.Quarantines(1, "DIVERGENT", "2026-11-23T09:00:00Z", "/data/orders/quarantine/a", 12);
        NodeStatusView.Quarantines two = new NodeStatusView.Quarantines(2, "DAMAGED", "2026-11-23T10:00:00Z", "/data/orders/quarantine/b", 3);
        QueueClusterStatus first = reconcile(new QueueClusterStatus(), nodes("q-0", 3, one, null), steady, "t1");
        QueueClusterStatus again = reconcile(first, nodes("q-0", 3, one, null), steady, "t2");
        QueueClusterStatus another = reconcile(again, nodes("q-0", 3, two, null), steady, "t3");
        ClusterEvents.ClusterEvent quarantined = event(new QueueClusterStatus(), first, "Quarantined");
        assertEquals("Warning", quarantined.type());
        assertEquals("q-2 orders: excerpts moved aside, DIVERGENT at 2026-11-23T09:00:00Z, 12 excerpt(s) in /data/orders/quarantine/a"
            + " (1 folder(s) held; never served nor deleted by the node)", quarantined.message());
        assertEquals(quarantined, event(first, again, "Quarantined"));
        assertNotEquals(quarantined.key(), event(again, another, "Quarantined").key());
    }

    @Test
    void eventNamesAreValidAndTheSameForTheSameOccurrenceOfTheSameCluster() {
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName("orders").withNamespace("ns").withUid("u-1").build());
        QueueCluster recreated = new QueueCluster();
        recreated.setMetadata(new ObjectMetaBuilder().withName("orders").withNamespace("ns").withUid("u-2").build());
        String name = EventPublisher.eventName(cluster, "term/3");
        assertTrue(name.matches("orders\\.[0-9a-f]{16}"), name);
        assertEquals(name, EventPublisher.eventName(cluster, "term/3"));
        assertNotEquals(name, EventPublisher.eventName(cluster, "term/4"));
        assertNotEquals(name, EventPublisher.eventName(recreated, "term/3"), "a cluster deleted and created again starts afresh");
    }
}
