package io.queueenterprise.operator.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Plans carried out against three {@link StandInNode}s (stand-ins for the node's admin endpoint, not the node), with
 * a recorder that writes into the same journal: the order of what reached the "API server" and the nodes is checked.
 */
@org.junit.jupiter.api.Tag("unit")
class FailoverExecutorTest {
    private static final String TOKEN = "operator-token";
    private static final List<String> REPLICAS = List.of("q-0", "q-1", "q-2");
    private static final List<String> QUEUES = List.of("orders");

    private final List<String> journal = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, StandInNode> nodes = new LinkedHashMap<>();
    private final Map<String, AdminClient> clients = new LinkedHashMap<>();
    /** What status holds: survives an "operator restart" (a new executor call) as the API server would. */
    private long recordedTerm;
    private String recordedLeader;
    private boolean failRecording;

    private final ElectionRecorder recorder = new ElectionRecorder() {
        @Override
        public void recordTerm(Plan.Elect plan) {
            if (failRecording) {
                throw new IllegalStateException("409 Conflict: the QueueCluster changed");
            }
            recordedTerm = plan.term();
            journal.add("status term " + plan.term());
        }

        @Override
        public void recordLeader(String leader, long term) {
            recordedLeader = leader;
            journal.add("status leader " + leader + " " + term);
        }
    };

    @BeforeEach
    void start() throws IOException {
        for (String replica : REPLICAS) {
            StandInNode node = new StandInNode(replica, TOKEN, Set.copyOf(REPLICAS), journal);
            nodes.put(replica, node);
            clients.put(replica, node.client(TOKEN));
        }
    }

    @AfterEach
    void stop() {
        nodes.values().forEach(StandInNode::close);
    }

    private Map<String, ReplicaObservation> observe(Set<String> lost) {
        Map<String, ReplicaObservation> observations = new LinkedHashMap<>();
        for (String replica : REPLICAS) {
            if (lost.contains(replica)) {
                observations.put(replica, new ReplicaObservation.Lost(replica, "pod deleted"));
                continue;
            }
            try {
                observations.put(replica, new ReplicaObservation.Reachable(replica, clients.get(replica).status()));
            } catch (AdminException e) {
                observations.put(replica, new ReplicaObservation.Lost(replica, e.getMessage()));
            }
        }
        return observations;
    }

    private FailoverExecutor.Outcome reconcile(Set<String> lost) {
        Map<String, AdminClient> reachable = new LinkedHashMap<>(clients);
        lost.forEach(reachable::remove);
        return FailoverExecutor.execute(FailoverPlanner.plan(REPLICAS, QUEUES, recordedTerm, recordedLeader, observe(lost)),
            QUEUES, reachable, recorder);
    }

    @Test
    void bootstrapThenFailoverRecordsEachTermBeforeAnyNodeHearsOfIt() {
        nodes.get("q-0").durable("orders", -1);
        nodes.get("q-1").durable("orders", -1);
        nodes.get("q-2").durable("orders", -1);
        FailoverExecutor.Outcome first = reconcile(Set.of());
        assertEquals("q-0", first.leader());
        assertEquals(List.of("status term 1", "fence q-0 1", "fence q-1 1", "fence q-2 1", "promote q-0 1", "follow q-1 1",
            "follow q-2 1", "status leader q-0 1"), journal);
        assertEquals(List.of(), first.problems());

        journal.clear();
        nodes.get("q-1").durable("orders", 100);
        nodes.get("q-2").durable("orders", 90);
        nodes.get("q-0").close();   // the leader's pod is gone
        FailoverExecutor.Outcome second = reconcile(Set.of("q-0"));
        assertEquals("q-1", second.leader(), "highest durable index");
        assertEquals(2, second.term());
        assertEquals(List.of("status term 2", "fence q-1 2", "fence q-2 2", "promote q-1 2", "follow q-2 2", "status leader q-1 2"), journal);
        assertEquals("FOLLOWER", nodes.get("q-2").role());
        assertEquals("q-1", nodes.get("q-2").leader());
        assertEquals(1, second.problems().size(), "the lost leader could not be told to follow: " + second.problems());
    }

    @Test
    void aReachableFormerLeaderIsFencedBeforeThePromotion() {
        nodes.get("q-0").state("LEADER", 3, "q-0").durable("orders", 5);
        nodes.get("q-1").state("FOLLOWER", 3, "q-0").durable("orders", 5);
        nodes.get("q-2").state("FOLLOWER", 3, "q-0").durable("orders", 4);
        recordedTerm = 3;
        recordedLeader = "q-0";
        Plan.Elect plan = new Plan.Elect("q-1", 4, "q-0", List.of("q-0", "q-2"), true, "switchover");
        FailoverExecutor.execute(plan, QUEUES, clients, recorder);
        assertEquals(List.of("status term 4", "fence q-0 4", "fence q-1 4", "fence q-2 4", "promote q-1 4", "follow q-0 4",
            "follow q-2 4", "status leader q-1 4"), journal);
    }

    /** Term 1 led by q-0 with q-1 and q-2 following, all at index 20; q-0's pod is gone: the plan (q-1 at term 2). */
    private Plan planWithTheLeaderLostAtAnEvenIndex() {
        nodes.get("q-0").state("LEADER", 1, "q-0").durable("orders", 20);
        nodes.get("q-1").state("FOLLOWER", 1, "q-0").durable("orders", 20);
        nodes.get("q-2").state("FOLLOWER", 1, "q-0").durable("orders", 20);
        recordedTerm = 1;
        recordedLeader = "q-0";
        return FailoverPlanner.plan(REPLICAS, QUEUES, recordedTerm, recordedLeader, observe(Set.of("q-0")));
    }

    private FailoverExecutor.Outcome executeWithoutQ0(Plan plan) {
        Map<String, AdminClient> reachable = new LinkedHashMap<>(clients);
        reachable.remove("q-0");
        return FailoverExecutor.execute(plan, QUEUES, reachable, recorder);
    }

    /**
     * What fencing first closes (docs/operator.md, "Why every replica is fenced before the choice"): the plan chose q-1 from indexes read while the former
     * leader still ran; it then had excerpt 21 quorum-acknowledged through q-2 alone. Electing q-1 would lose it (q-2's
     * copy quarantined when it follows). The fences' answers show it, and q-2 is promoted instead.
     */
    @Test
    void aFollowerThatReceivedMoreAfterThePlanWasMadeIsElectedFromItsFenceAnswer() {
        Plan plan = planWithTheLeaderLostAtAnEvenIndex();
        assertEquals("q-1", ((Plan.Elect) plan).candidate(), "a tie when observed: the lower ordinal");
        nodes.get("q-2").durable("orders", 21); // the former leader, still running, replicated 21 to q-2 and acknowledged it
        FailoverExecutor.Outcome outcome = executeWithoutQ0(plan);
        assertEquals("q-2", outcome.leader(), "the replica holding the quorum-acknowledged excerpt");
        assertEquals(List.of("status term 2", "fence q-1 2", "fence q-2 2", "promote q-2 2", "follow q-1 2", "status leader q-2 2"),
            journal, "fenced before the choice, so nothing more arrives after it");
        assertEquals("FOLLOWER", nodes.get("q-1").role());
        assertEquals("q-2", nodes.get("q-1").leader());
    }

    @Test
    void withoutAMajorityFencedNothingIsPromoted() {
        Plan plan = planWithTheLeaderLostAtAnEvenIndex();
        nodes.get("q-2").close(); // answered the planner's status, gone by the fence
        FailoverExecutor.Outcome outcome = executeWithoutQ0(plan);
        assertFalse(outcome.leaderInPlace());
        assertTrue(outcome.problems().stream().anyMatch(p -> p.contains("1 of 3 replicas fenced")), outcome.problems().toString());
        assertFalse(journal.stream().anyMatch(line -> line.startsWith("promote")), "nothing promoted: " + journal);
    }

    @Test
    void nothingIsPromotedWhenTheTermCannotBeRecorded() {
        failRecording = true;
        assertThrows(IllegalStateException.class, () -> reconcile(Set.of()));
        assertEquals(List.of(), journal, "no node heard of an unrecorded term");
        assertEquals("STANDBY", nodes.get("q-0").role());
    }

    @Test
    void anOperatorRestartedMidFailoverNeverReusesATerm() {
        nodes.get("q-0").state("LEADER", 1, "q-0").durable("orders", 10);
        nodes.get("q-1").state("FOLLOWER", 1, "q-0").durable("orders", 10);
        nodes.get("q-2").state("FOLLOWER", 1, "q-0").durable("orders", 9);
        recordedTerm = 1;
        recordedLeader = "q-0";
        nodes.get("q-0").close();

        // the first operator records term 2 for q-1 and dies before promoting
        Plan.Elect interrupted = assertInstanceOf(Plan.Elect.class,
            FailoverPlanner.plan(REPLICAS, QUEUES, recordedTerm, recordedLeader, observe(Set.of("q-0"))));
        assertEquals(2, interrupted.term());
        recorder.recordTerm(interrupted);

        // its successor starts from status alone: term 2 is spent, q-1 is promoted at 3
        FailoverExecutor.Outcome outcome = reconcile(Set.of("q-0"));
        assertEquals("q-1", outcome.leader());
        assertEquals(3, outcome.term());
        assertEquals(List.of("status term 2", "status term 3", "fence q-1 3", "fence q-2 3", "promote q-1 3", "follow q-2 3",
            "status leader q-1 3"), journal);

        // a third operator, restarted after the promote but before status named the leader, adopts q-1 at 3
        journal.clear();
        recordedLeader = "q-0";
        FailoverExecutor.Outcome adopted = reconcile(Set.of("q-0"));
        assertEquals("q-1", adopted.leader());
        assertEquals(3, adopted.term());
        assertEquals(List.of("status leader q-1 3"), journal, "no new term, no promote: q-2 already follows q-1 at 3");
        assertTrue(adopted.leaderInPlace());
    }

    @Test
    void aSwitchoverFencesThenPromotesACaughtUpCandidate() {
        nodes.get("q-0").state("LEADER", 3, "q-0").durable("orders", 20);
        nodes.get("q-1").state("FOLLOWER", 3, "q-0").durable("orders", 20);
        nodes.get("q-2").state("FOLLOWER", 3, "q-0").durable("orders", 19);
        Plan.Elect plan = new Plan.Elect("q-1", 4, "q-0", List.of("q-0", "q-2"), true, "rolling update");
        FailoverExecutor.Outcome outcome = FailoverExecutor.switchover(plan, QUEUES, clients, recorder);
        assertEquals("q-1", outcome.leader());
        assertEquals(List.of("status term 4", "fence q-0 4", "promote q-1 4", "follow q-0 4", "follow q-2 4", "status leader q-1 4"), journal);
    }

    @Test
    void aSwitchoverWhoseCandidateFellBehindKeepsTheFormerLeader() {
        // the leader appended after the plan was made: the fence's answer shows 21, the candidate holds 20
        nodes.get("q-0").state("LEADER", 3, "q-0").durable("orders", 21);
        nodes.get("q-1").state("FOLLOWER", 3, "q-0").durable("orders", 20);
        nodes.get("q-2").state("FOLLOWER", 3, "q-0").durable("orders", 20);
        Plan.Elect plan = new Plan.Elect("q-1", 4, "q-0", List.of("q-0", "q-2"), true, "rolling update");
        FailoverExecutor.Outcome outcome = FailoverExecutor.switchover(plan, QUEUES, clients, recorder);
        assertEquals("q-0", outcome.leader(), "nothing the fenced leader held is lost");
        assertEquals(List.of("status term 4", "fence q-0 4", "status term 5", "promote q-0 5", "follow q-2 5", "follow q-1 5",
            "status leader q-0 5"), journal);
        assertEquals("LEADER", nodes.get("q-0").role());
    }

    @Test
    void aPromoteRefusedAsStaleLeavesNoLeaderAndTheNextPlanGoesHigher() {
        nodes.get("q-0").state("LEADER", 1, "q-0").durable("orders", 10);
        nodes.get("q-1").state("FENCED", 7, null).durable("orders", 10);   // someone fenced it at 7 behind our back
        nodes.get("q-2").state("FOLLOWER", 1, "q-0").durable("orders", 9);
        recordedTerm = 1;
        recordedLeader = "q-0";
        nodes.get("q-0").close();
        Plan.Elect stale = new Plan.Elect("q-1", 2, "q-0", List.of("q-0", "q-2"), true, "test");
        FailoverExecutor.Outcome refused = FailoverExecutor.execute(stale, QUEUES, clients, recorder);
        assertFalse(refused.leaderInPlace());
        assertTrue(refused.problems().stream().anyMatch(p -> p.contains("STALE_TERM")), refused.problems().toString());
        assertFalse(journal.stream().anyMatch(line -> line.startsWith("promote")), "nothing promoted: " + journal);
        FailoverExecutor.Outcome retried = reconcile(Set.of("q-0"));
        assertEquals("q-1", retried.leader());
        assertEquals(8, retried.term(), "above the 7 q-1 reported");
    }
}
