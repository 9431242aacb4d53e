package io.queueenterprise.operator.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The failover decision over observed statuses, without nodes or a cluster. */
@org.junit.jupiter.api.Tag("unit")
class FailoverPlannerTest {
    private static final List<String> REPLICAS = List.of("q-0", "q-1", "q-2");
    private static final List<String> QUEUES = List.of("orders", "telemetry");

    private static ReplicaObservation node(String name, String role, long term, String leader, long orders, long telemetry) {
        List<NodeStatusView.Queue> queues = List.of(
            new NodeStatusView.Queue("orders", "LIVE", orders, orders, -1, 0, List.of(), 0, 0),
            new NodeStatusView.Queue("telemetry", "LIVE", telemetry, telemetry, -1, 0, List.of(), 0, 0));
        return new ReplicaObservation.Reachable(name, new NodeStatusView(name, role, term, leader, queues, null));
    }

    private static ReplicaObservation lost(String name) {
        return new ReplicaObservation.Lost(name, "pod " + name + " not found");
    }

    private static Map<String, ReplicaObservation> observed(ReplicaObservation... observations) {
        Map<String, ReplicaObservation> map = new LinkedHashMap<>();
        for (ReplicaObservation observation : observations) {
            map.put(observation.replica(), observation);
        }
        return map;
    }

    @Test
    void aHealthyClusterIsLeftAlone() {
        Plan plan = FailoverPlanner.plan(REPLICAS, QUEUES, 4, "q-1", observed(
            node("q-0", "FOLLOWER", 4, "q-1", 10, 5), node("q-1", "LEADER", 4, "q-1", 12, 5), node("q-2", "FOLLOWER", 4, "q-1", 11, 5)));
        assertEquals(new Plan.Steady("q-1", 4), plan);
    }

    @Test
    void aLostFollowerNeedsNothingAndComesBackRepointed() {
        assertEquals(new Plan.Steady("q-1", 4), FailoverPlanner.plan(REPLICAS, QUEUES, 4, "q-1", observed(
            lost("q-0"), node("q-1", "LEADER", 4, "q-1", 12, 5), node("q-2", "FOLLOWER", 4, "q-1", 11, 5))));
        // restarted as STANDBY: re-pointed at the current term
        assertEquals(new Plan.Repoint("q-1", 4, List.of("q-0")), FailoverPlanner.plan(REPLICAS, QUEUES, 4, "q-1", observed(
            node("q-0", "STANDBY", 4, null, 3, 1), node("q-1", "LEADER", 4, "q-1", 12, 5), node("q-2", "FOLLOWER", 4, "q-1", 11, 5))));
    }

    @Test
    void aLostLeaderIsReplacedByTheMostAdvancedReplicaAtTheNextTerm() {
        Plan plan = FailoverPlanner.plan(REPLICAS, QUEUES, 4, "q-1", observed(
            node("q-0", "FOLLOWER", 4, "q-1", 10, 5), lost("q-1"), node("q-2", "FOLLOWER", 4, "q-1", 11, 5)));
        Plan.Elect elect = assertInstanceOf(Plan.Elect.class, plan);
        assertEquals("q-2", elect.candidate());
        assertEquals(5, elect.term());
        assertEquals("q-1", elect.formerLeader());
        assertEquals(List.of("q-0", "q-1"), elect.followers());
        assertTrue(elect.dominates());
        assertTrue(elect.why().contains("leader q-1 lost: pod q-1 not found"), elect.why());
    }

    @Test
    void aLeaderRestartedInPlaceThatHoldsTheMostIsElectedAgainAtANewTerm() {
        // restarted and came back as STANDBY holding more than the others: promoting another would drop that
        Plan plan = FailoverPlanner.plan(REPLICAS, QUEUES, 4, "q-1", observed(
            node("q-0", "FOLLOWER", 4, "q-1", 10, 5), node("q-1", "STANDBY", 4, null, 99, 99), node("q-2", "FOLLOWER", 4, "q-1", 11, 5)));
        Plan.Elect elect = assertInstanceOf(Plan.Elect.class, plan);
        assertEquals("q-1", elect.candidate());
        assertEquals(5, elect.term());
    }

    @Test
    void aSingleReplicaRestartedOrFencedIsPromotedAgain() {
        // found against the real node: a lone replica fenced at 2 was left without a leader (NoQuorum)
        Plan.Elect elect = assertInstanceOf(Plan.Elect.class, FailoverPlanner.plan(List.of("q-0"), QUEUES, 1, "q-0",
            observed(node("q-0", "FENCED", 2, null, 7, 7))));
        assertEquals("q-0", elect.candidate());
        assertEquals(3, elect.term());
    }

    @Test
    void withoutAMajorityNothingIsPromoted() {
        Plan plan = FailoverPlanner.plan(REPLICAS, QUEUES, 4, "q-1", observed(
            node("q-0", "FOLLOWER", 4, "q-1", 10, 5), lost("q-1"), lost("q-2")));
        Plan.NoQuorum noQuorum = assertInstanceOf(Plan.NoQuorum.class, plan);
        assertEquals(1, noQuorum.reachable());
        assertEquals(2, noQuorum.needed());
    }

    @Test
    void theNewTermExceedsEveryTermRecordedOrReported() {
        // a node saw term 9 (a person ran qe node fence 9): 5 would be refused as stale
        Plan.Elect elect = assertInstanceOf(Plan.Elect.class, FailoverPlanner.plan(REPLICAS, QUEUES, 4, "q-1", observed(
            node("q-0", "FENCED", 9, null, 10, 5), lost("q-1"), node("q-2", "FOLLOWER", 4, "q-1", 11, 5))));
        assertEquals(10, elect.term());
    }

    @Test
    void tiesGoToTheLowestOrdinalAndBootstrapStartsAtTermOne() {
        Plan.Elect elect = assertInstanceOf(Plan.Elect.class, FailoverPlanner.plan(REPLICAS, QUEUES, 0, null, observed(
            node("q-0", "STANDBY", 0, null, -1, -1), node("q-1", "STANDBY", 0, null, -1, -1), node("q-2", "STANDBY", 0, null, -1, -1))));
        assertEquals("q-0", elect.candidate());
        assertEquals(1, elect.term());
        assertEquals(null, elect.formerLeader());
        assertEquals(List.of("q-1", "q-2"), elect.followers());
    }

    @Test
    void whenNoReplicaDominatesTheFirstQueueDecidesAndThePlanSaysSo() {
        Plan.Elect elect = assertInstanceOf(Plan.Elect.class, FailoverPlanner.plan(REPLICAS, QUEUES, 4, "q-1", observed(
            node("q-0", "FOLLOWER", 4, "q-1", 12, 3), lost("q-1"), node("q-2", "FOLLOWER", 4, "q-1", 11, 5))));
        assertEquals("q-0", elect.candidate());
        assertFalse(elect.dominates());
    }

    @Test
    void aCorruptedReplicaIsNeverTheCandidate() {
        NodeStatusView corrupted = new NodeStatusView("q-2", "FOLLOWER", 4, "q-1",
            List.of(new NodeStatusView.Queue("orders", "CORRUPTED", 50, 50, -1, 0, List.of(), 0, 0)), null);
        Plan.Elect elect = assertInstanceOf(Plan.Elect.class, FailoverPlanner.plan(REPLICAS, QUEUES, 4, "q-1", observed(
            node("q-0", "FOLLOWER", 4, "q-1", 10, 5), lost("q-1"), new ReplicaObservation.Reachable("q-2", corrupted))));
        assertEquals("q-0", elect.candidate());
    }

    @Test
    void aCandidatePromotedBeforeAnOperatorRestartIsAdoptedWithoutANewTerm() {
        // status recorded term 5 for a failover away from q-1, then the operator died after promoting q-2
        Plan plan = FailoverPlanner.plan(REPLICAS, QUEUES, 5, "q-1", observed(
            node("q-0", "FOLLOWER", 4, "q-1", 10, 5), lost("q-1"), node("q-2", "LEADER", 5, "q-2", 11, 5)));
        assertEquals(new Plan.Repoint("q-2", 5, List.of("q-0")), plan);
    }

    @Test
    void aFailoverInterruptedBeforePromotingIsRetriedAtAFreshTerm() {
        // status recorded term 5, the operator died before promote: term 5 is spent, never reused
        Plan.Elect elect = assertInstanceOf(Plan.Elect.class, FailoverPlanner.plan(REPLICAS, QUEUES, 5, "q-1", observed(
            node("q-0", "FOLLOWER", 4, "q-1", 10, 5), lost("q-1"), node("q-2", "FOLLOWER", 4, "q-1", 11, 5))));
        assertEquals(6, elect.term());
    }
}
