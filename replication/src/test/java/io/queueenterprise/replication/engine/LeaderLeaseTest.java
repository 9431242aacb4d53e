package io.queueenterprise.replication.engine;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The lease from echoed clocks on a fake clock: majority counting for 1, 2, 3 and 5 replicas, lapse, confirmation. */
@Tag("unit")
class LeaderLeaseTest {
    private static final long SECOND = 1_000_000_000L;
    private static final long TIMEOUT = 2 * SECOND;
    /** A fake clock far from zero (0 means "no echo yet" on the wire). */
    private static final long T0 = 1_000 * SECOND;

    @Test
    void aSingleReplicaAlwaysHoldsItAndIsConfirmedAtOnceAtAnyTerm() {
        LeaderLease lease = new LeaderLease(1, 0, TIMEOUT);
        lease.lead(7);
        assertEquals(LeaderLease.NEVER_LAPSES, lease.acknowledgeUntil(T0));
        assertEquals(LeaderLease.NEVER_LAPSES, lease.acknowledgeUntil(T0 + 1_000 * SECOND));
    }

    @Test
    void twoReplicasNeedTheOneFollower() {
        LeaderLease lease = new LeaderLease(2, 0, TIMEOUT);
        lease.lead(1);
        assertEquals(2, lease.majority());
        assertEquals(LeaderLease.NOT_HELD, lease.acknowledgeUntil(T0), "nothing echoed yet");
        lease.echoed(1, T0, T0 + 5_000_000);
        assertEquals(T0 + TIMEOUT, lease.acknowledgeUntil(T0 + 5_000_000), "from the echoed send time, not the arrival");
        assertEquals(LeaderLease.NOT_HELD, lease.acknowledgeUntil(T0 + TIMEOUT), "lapsed at send time + timeout");
        lease.echoed(1, T0 + TIMEOUT, T0 + TIMEOUT + 1);
        assertEquals(T0 + 2 * TIMEOUT, lease.acknowledgeUntil(T0 + TIMEOUT + 1), "resumes when heard again");
    }

    @Test
    void threeReplicasNeedOneFollowerOfTwo() {
        LeaderLease lease = new LeaderLease(3, 1, TIMEOUT);
        lease.lead(1);
        lease.echoed(0, T0, T0);
        assertEquals(T0 + TIMEOUT, lease.acknowledgeUntil(T0));
        lease.echoed(2, T0 + SECOND, T0 + SECOND);
        assertEquals(T0 + SECOND + TIMEOUT, lease.acknowledgeUntil(T0 + SECOND), "the most recent echo completes the majority");
        lease.echoed(1, T0 + 5 * SECOND, T0 + SECOND);
        assertEquals(T0 + SECOND + TIMEOUT, lease.expiresAt(), "its own position echoes nothing");
    }

    @Test
    void fiveReplicasNeedTheSecondMostRecentOfFourEchoes() {
        LeaderLease lease = new LeaderLease(5, 0, TIMEOUT);
        lease.lead(1);
        assertEquals(3, lease.majority());
        lease.echoed(3, T0 + 3 * SECOND, T0 + 3 * SECOND);
        assertEquals(LeaderLease.NOT_HELD, lease.expiresAt(), "one follower and itself are two of five");
        lease.echoed(1, T0 + SECOND, T0 + 3 * SECOND);
        lease.echoed(4, T0 + 2 * SECOND, T0 + 3 * SECOND);
        lease.echoed(2, T0, T0 + 3 * SECOND);
        assertEquals(T0 + 2 * SECOND + TIMEOUT, lease.expiresAt(), "echoes 3, 2, 1, 0 s: the second most recent counts");
        assertTrue(lease.held(T0 + 2 * SECOND + TIMEOUT - 1));
        assertFalse(lease.held(T0 + 2 * SECOND + TIMEOUT));
    }

    @Test
    void anOlderOrFutureEchoMovesNothingAndFollowersEchoNothingBeforeTheirFirstHeartbeat() {
        LeaderLease lease = new LeaderLease(3, 0, TIMEOUT);
        lease.lead(1);
        lease.echoed(1, 0, T0);
        assertEquals(LeaderLease.NOT_HELD, lease.expiresAt(), "0: no leader heartbeat received yet");
        lease.echoed(1, T0 + SECOND, T0);
        assertEquals(LeaderLease.NOT_HELD, lease.expiresAt(), "a clock this node has not reached was never sent by it");
        lease.echoed(1, T0, T0);
        lease.echoed(1, T0 - SECOND, T0 + 1);
        assertEquals(T0 + TIMEOUT, lease.expiresAt(), "a late, older echo does not shorten it");
    }

    @Test
    void aLeaderAboveTermOneWaitsTheTimeoutAndMarginAfterItFirstHeldTheLeaseThenNoMore() {
        LeaderLease lease = new LeaderLease(3, 0, TIMEOUT);
        lease.lead(2);
        long heard = T0;
        lease.echoed(1, heard, heard);
        assertEquals(LeaderLease.NOT_HELD, lease.acknowledgeUntil(heard), "held, not confirmed");
        long confirmedAt = heard + TIMEOUT + LeaderLease.margin(TIMEOUT);
        long t = heard;
        while (t < confirmedAt - 100_000_000L) {
            t += 100_000_000L;
            lease.echoed(1, t, t);
            assertEquals(LeaderLease.NOT_HELD, lease.acknowledgeUntil(t), "still within the wait at +" + (t - heard) / 1_000_000 + " ms");
        }
        lease.echoed(1, confirmedAt, confirmedAt);
        assertEquals(confirmedAt + TIMEOUT, lease.acknowledgeUntil(confirmedAt));
        assertTrue(lease.confirmed());
        long later = confirmedAt + 10 * SECOND;
        assertEquals(LeaderLease.NOT_HELD, lease.acknowledgeUntil(later), "lapsed: cut off");
        lease.echoed(2, later, later);
        assertEquals(later + TIMEOUT, lease.acknowledgeUntil(later), "regained within the term: no new wait");
    }

    @Test
    void aNewTermOrAStopForgetsEverything() {
        LeaderLease lease = new LeaderLease(3, 0, TIMEOUT);
        lease.lead(1);
        lease.echoed(1, T0, T0);
        assertEquals(T0 + TIMEOUT, lease.acknowledgeUntil(T0));
        lease.stop();
        assertEquals(LeaderLease.NOT_HELD, lease.acknowledgeUntil(T0));
        lease.echoed(1, T0, T0);
        assertEquals(LeaderLease.NOT_HELD, lease.acknowledgeUntil(T0), "echoes to a node that does not lead are ignored");
        lease.lead(3);
        assertEquals(LeaderLease.NOT_HELD, lease.acknowledgeUntil(T0), "a new term starts with no echo");
        assertFalse(lease.confirmed());
    }

    @Test
    void aTimeoutOfZeroTurnsItOff() {
        LeaderLease lease = new LeaderLease(3, 0, 0);
        lease.lead(5);
        assertEquals(LeaderLease.NEVER_LAPSES, lease.acknowledgeUntil(T0));
    }
}
