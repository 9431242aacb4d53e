package io.queueenterprise.operator.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** Followers first, one at a time, from a healthy cluster; the leader last, through a switchover. */
@org.junit.jupiter.api.Tag("unit")
class RollingUpdatePlannerTest {
    private static final List<String> REPLICAS = List.of("q-0", "q-1", "q-2");
    private static final List<String> QUEUES = List.of("orders");
    private static final String NEW = "rev-2";

    private static ReplicaObservation node(String name, String role, long durable) {
        return node(name, role, durable, "LIVE");
    }

    private static ReplicaObservation node(String name, String role, long durable, String state) {
        return new ReplicaObservation.Reachable(name, new NodeStatusView(name, role, 4, "q-1",
            List.of(new NodeStatusView.Queue("orders", state, durable, durable, -1, 0, List.of(), 0, 0)), null));
    }

    private static Map<String, ReplicaObservation> healthy(long d0, long d1, long d2) {
        Map<String, ReplicaObservation> observations = new LinkedHashMap<>();
        observations.put("q-0", node("q-0", "FOLLOWER", d0));
        observations.put("q-1", node("q-1", "LEADER", d1));
        observations.put("q-2", node("q-2", "FOLLOWER", d2));
        return observations;
    }

    private static Map<String, String> revisions(String r0, String r1, String r2) {
        return Map.of("q-0", r0, "q-1", r1, "q-2", r2);
    }

    private static RollingUpdatePlanner.Step next(Map<String, String> revisions, Map<String, ReplicaObservation> observations) {
        return RollingUpdatePlanner.next(REPLICAS, QUEUES, 4, "q-1", revisions, NEW, observations);
    }

    @Test
    void nothingToDoWhenEveryPodIsAtTheUpdateRevision() {
        assertInstanceOf(RollingUpdatePlanner.UpToDate.class, next(revisions(NEW, NEW, NEW), healthy(5, 5, 5)));
    }

    @Test
    void followersGoFirstHighestOrdinalFirst() {
        assertEquals(new RollingUpdatePlanner.Restart("q-2"), next(revisions("rev-1", "rev-1", "rev-1"), healthy(5, 5, 5)));
        assertEquals(new RollingUpdatePlanner.Restart("q-0"), next(revisions("rev-1", "rev-1", NEW), healthy(5, 5, 5)));
    }

    @Test
    void oneDisruptionAtATimeOnlyFromAHealthyCluster() {
        Map<String, ReplicaObservation> restarting = healthy(5, 5, 5);
        restarting.put("q-2", new ReplicaObservation.Lost("q-2", "pod q-2 is Pending"));
        assertInstanceOf(RollingUpdatePlanner.Wait.class, next(revisions("rev-1", "rev-1", NEW), restarting));
        Map<String, ReplicaObservation> catchingUp = healthy(5, 5, 5);
        catchingUp.put("q-2", node("q-2", "FOLLOWER", 3, "CATCHING_UP"));
        assertInstanceOf(RollingUpdatePlanner.Wait.class, next(revisions("rev-1", "rev-1", NEW), catchingUp));
    }

    @Test
    void anOutdatedFollowerThatIsOutAlreadyIsRestartedFirst() {
        // a configuration that crash-looped q-0, then fixed by the user: q-0 (outdated again) must be restarted by the
        // rollout, or it would wait for it forever; it goes before q-2 (in place, higher ordinal)
        Map<String, ReplicaObservation> crashLooping = healthy(5, 5, 5);
        crashLooping.put("q-0", new ReplicaObservation.Lost("q-0", "pod q-0 is Running but not answering: connection refused"));
        assertEquals(new RollingUpdatePlanner.Restart("q-0"), next(revisions("rev-bad", "rev-1", "rev-1"), crashLooping));
        Map<String, ReplicaObservation> corrupted = healthy(5, 5, 5);
        corrupted.put("q-0", node("q-0", "FOLLOWER", 3, "CORRUPTED"));
        assertEquals(new RollingUpdatePlanner.Restart("q-0"), next(revisions("rev-1", "rev-1", "rev-1"), corrupted));
    }

    @Test
    void noRestartWithoutAMajorityInPlaceOrWithTheLeaderOut() {
        Map<String, ReplicaObservation> twoOut = healthy(5, 5, 5);
        twoOut.put("q-0", new ReplicaObservation.Lost("q-0", "pod q-0 is Pending"));
        twoOut.put("q-2", node("q-2", "FOLLOWER", 3, "CORRUPTED"));
        RollingUpdatePlanner.Wait wait = assertInstanceOf(RollingUpdatePlanner.Wait.class,
            next(revisions("rev-1", "rev-1", "rev-1"), twoOut));
        assertTrue(wait.reason().contains("too few replicas in place"), wait.reason());

        Map<String, ReplicaObservation> leaderOut = healthy(5, 5, 5);
        leaderOut.put("q-1", node("q-1", "LEADER", 5, "DISK_FULL"));
        wait = assertInstanceOf(RollingUpdatePlanner.Wait.class, next(revisions("rev-1", "rev-1", "rev-1"), leaderOut));
        assertTrue(wait.reason().contains("waits for the leader"), wait.reason());

        Map<String, ReplicaObservation> noPod = healthy(5, 5, 5);
        noPod.put("q-0", new ReplicaObservation.Lost("q-0", "pod q-0 not found"));
        assertInstanceOf(RollingUpdatePlanner.Wait.class, next(Map.of("q-1", "rev-1", "q-2", "rev-1"), noPod),
            "a replica without a pod is the StatefulSet's to create");
    }

    @Test
    void theLeaderGoesLastThroughASwitchoverToTheMostAdvancedFollower() {
        RollingUpdatePlanner.Switchover switchover = assertInstanceOf(RollingUpdatePlanner.Switchover.class,
            next(revisions(NEW, "rev-1", NEW), healthy(9, 9, 8)));
        assertEquals("q-0", switchover.plan().candidate());
        assertEquals("q-1", switchover.plan().formerLeader());
        assertEquals(5, switchover.plan().term());
        assertTrue(switchover.plan().followers().contains("q-1"), "the former leader follows the new one");
    }

    @Test
    void theSwitchoverWaitsForACandidateThatHoldsEverything() {
        RollingUpdatePlanner.Wait wait = assertInstanceOf(RollingUpdatePlanner.Wait.class,
            next(revisions(NEW, "rev-1", NEW), healthy(8, 9, 7)));
        assertTrue(wait.reason().contains("behind the leader"), wait.reason());
    }
}
