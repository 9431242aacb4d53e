package io.queueenterprise.operator.reconciler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.queueenterprise.operator.failover.Plan;
import io.queueenterprise.operator.failover.RollingUpdatePlanner;

/** When the operator looks at the nodes again: soon while something moves that only the nodes report, else at its poll. */
@Tag("unit")
class ReconcilePollTest {
    private static final Plan STEADY = new Plan.Steady("r-0", 3);
    private static final RollingUpdatePlanner.Step UP_TO_DATE = new RollingUpdatePlanner.UpToDate();

    @Test
    void aSteadyUpToDateClusterIsPolledAtTheSlowInterval() {
        assertEquals(QueueClusterReconciler.POLL, QueueClusterReconciler.nextPoll(STEADY, UP_TO_DATE, true));
    }

    @Test
    void everyStepOfARollingUpdateIsFollowedSoon() {
        for (RollingUpdatePlanner.Step step : List.of(new RollingUpdatePlanner.Wait("r-1 catching up"),
                new RollingUpdatePlanner.Restart("r-1"),
                new RollingUpdatePlanner.Switchover(new Plan.Elect("r-1", 4, "r-0", List.of("r-2"), true, "switchover")))) {
            assertEquals(QueueClusterReconciler.SETTLING_POLL, QueueClusterReconciler.nextPoll(STEADY, step, true), step.toString());
        }
    }

    @Test
    void aLeaderInPlaceThatDoesNotAcknowledgeYetIsFollowedSoon() {
        // just promoted: it holds no lease for about the lease timeout, and no pod event says when it does
        assertEquals(QueueClusterReconciler.SETTLING_POLL, QueueClusterReconciler.nextPoll(STEADY, UP_TO_DATE, false));
    }

    @Test
    void leadershipThatMovesIsFollowedSoonAndNoQuorumWaitsForPodEventsOrThePoll() {
        assertEquals(QueueClusterReconciler.SETTLING_POLL, QueueClusterReconciler.nextPoll(
            new Plan.Elect("r-1", 4, "r-0", List.of("r-2"), true, "leader lost"), UP_TO_DATE, true));
        assertEquals(QueueClusterReconciler.SETTLING_POLL, QueueClusterReconciler.nextPoll(
            new Plan.Repoint("r-0", 3, List.of("r-2")), UP_TO_DATE, true));
        assertEquals(QueueClusterReconciler.POLL, QueueClusterReconciler.nextPoll(
            new Plan.NoQuorum(1, 2, "two pods Pending"), UP_TO_DATE, true));
    }
}
