package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.QueueStatus;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.queueenterprise.replication.engine.ReplicaState.AWAITING_DESCRIPTOR;
import static io.queueenterprise.replication.engine.ReplicaState.BEHIND_RETENTION;
import static io.queueenterprise.replication.engine.ReplicaState.CATCHING_UP;
import static io.queueenterprise.replication.engine.ReplicaState.CORRUPTED;
import static io.queueenterprise.replication.engine.ReplicaState.DISK_FULL;
import static io.queueenterprise.replication.engine.ReplicaState.LEADING;
import static io.queueenterprise.replication.engine.ReplicaState.LIVE;
import static io.queueenterprise.replication.engine.ReplicaState.STOPPED;
import static io.queueenterprise.replication.engine.ReplicaState.WAITING_FOR_WRITER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A hosted queue's state machine without Aeron: every transition of the table (written out here again, as
 * docs/replication.md names it) is taken, every other one refused, and what each state reports.
 */
@Tag("unit")
class ReplicaStateTest {
    /** The transitions docs/replication.md names; staying in a state (a new detail) is always allowed besides. */
    private static final Map<ReplicaState, Set<ReplicaState>> LEGAL = new EnumMap<>(ReplicaState.class);

    static {
        LEGAL.put(STOPPED, EnumSet.of(LEADING, AWAITING_DESCRIPTOR, BEHIND_RETENTION, CORRUPTED));
        LEGAL.put(LEADING, EnumSet.of(STOPPED, CORRUPTED));
        LEGAL.put(AWAITING_DESCRIPTOR, EnumSet.of(CATCHING_UP, LIVE, WAITING_FOR_WRITER, BEHIND_RETENTION, DISK_FULL,
                CORRUPTED, STOPPED));
        LEGAL.put(CATCHING_UP, EnumSet.of(LIVE, AWAITING_DESCRIPTOR, WAITING_FOR_WRITER, BEHIND_RETENTION, DISK_FULL,
                CORRUPTED, STOPPED));
        LEGAL.put(LIVE, EnumSet.of(CATCHING_UP, AWAITING_DESCRIPTOR, WAITING_FOR_WRITER, BEHIND_RETENTION, DISK_FULL,
                CORRUPTED, STOPPED));
        LEGAL.put(WAITING_FOR_WRITER, EnumSet.of(AWAITING_DESCRIPTOR, BEHIND_RETENTION, DISK_FULL, CORRUPTED, STOPPED));
        LEGAL.put(BEHIND_RETENTION, EnumSet.of(CATCHING_UP, LIVE, WAITING_FOR_WRITER, DISK_FULL, CORRUPTED, STOPPED));
        LEGAL.put(DISK_FULL, EnumSet.of(AWAITING_DESCRIPTOR, BEHIND_RETENTION, CORRUPTED, STOPPED));
        LEGAL.put(CORRUPTED, EnumSet.of(CATCHING_UP, LIVE, WAITING_FOR_WRITER, BEHIND_RETENTION, DISK_FULL, STOPPED));
    }

    @Test
    void theTableCoversEveryState() {
        assertEquals(EnumSet.allOf(ReplicaState.class), LEGAL.keySet());
    }

    @Test
    void everyLegalTransitionIsTaken() {
        for (ReplicaState from : ReplicaState.values()) {
            for (ReplicaState to : LEGAL.get(from)) {
                QueueReplica q = queueIn(from);
                q.transition(to, from + " to " + to);
                assertEquals(to, q.state(), from + " -> " + to);
                assertEquals(from + " to " + to, q.detail());
            }
            QueueReplica q = queueIn(from);
            q.describe("still " + from);
            assertEquals(from, q.state());
            assertEquals("still " + from, q.detail());
        }
    }

    @Test
    void everyOtherTransitionIsRefused() {
        int refused = 0;
        for (ReplicaState from : ReplicaState.values()) {
            for (ReplicaState to : ReplicaState.values()) {
                if (to == from || LEGAL.get(from).contains(to)) {
                    continue;
                }
                QueueReplica q = queueIn(from);
                String before = q.detail();
                ReplicaState.IllegalTransitionException e = assertThrows(ReplicaState.IllegalTransitionException.class,
                        () -> q.transition(to, "not allowed"), from + " -> " + to);
                assertEquals(from, e.from);
                assertEquals(to, e.to);
                assertEquals(from, q.state(), "a refused transition leaves the state");
                assertEquals(before, q.detail(), "and its detail");
                refused++;
            }
        }
        assertTrue(refused > 0);
    }

    @Test
    void theStatusIsDerivedFromTheState() {
        Map<ReplicaState, QueueStatus.State> expected = new EnumMap<>(ReplicaState.class);
        expected.put(STOPPED, QueueStatus.State.STOPPED);
        expected.put(LEADING, QueueStatus.State.LIVE);
        expected.put(AWAITING_DESCRIPTOR, QueueStatus.State.CATCHING_UP);
        expected.put(CATCHING_UP, QueueStatus.State.CATCHING_UP);
        expected.put(LIVE, QueueStatus.State.LIVE);
        expected.put(WAITING_FOR_WRITER, QueueStatus.State.CATCHING_UP); // a HELLO owed: not LIVE
        expected.put(BEHIND_RETENTION, QueueStatus.State.BEHIND_RETENTION);
        expected.put(DISK_FULL, QueueStatus.State.DISK_FULL);
        expected.put(CORRUPTED, QueueStatus.State.CORRUPTED);
        for (ReplicaState s : ReplicaState.values()) {
            QueueReplica q = queueIn(s);
            assertEquals(expected.get(s), q.reported(), s.name());
            assertEquals(s == CATCHING_UP || s == LIVE, s.synced(), s + " synced");
        }
    }

    @Test
    void aLostSessionUnsynchronisesOnlyASynchronisedFollower() {
        for (ReplicaState s : ReplicaState.values()) {
            QueueReplica q = queueIn(s);
            q.sessionLost("test");
            assertEquals(s.synced() ? AWAITING_DESCRIPTOR : s, q.state(), s.name());
        }
    }

    @Test
    void aNewQueueIsStoppedWithNothingToSay() {
        QueueReplica q = queue();
        assertEquals(STOPPED, q.state());
        assertEquals("", q.detail());
        q.transition(LEADING, null);
        assertEquals("", q.detail(), "null keeps the detail");
    }

    private static QueueReplica queue() {
        return new QueueReplica(new EngineSettings.QueueSettings("orders", "FAST_DAILY",
                EngineSettings.Encryption.NONE, AckMode.ASYNC), 0);
    }

    /** A new queue taken to {@code target} along the shortest path of legal transitions from STOPPED. */
    private static QueueReplica queueIn(ReplicaState target) {
        Map<ReplicaState, ReplicaState> cameFrom = new EnumMap<>(ReplicaState.class);
        ArrayDeque<ReplicaState> todo = new ArrayDeque<>(List.of(STOPPED));
        cameFrom.put(STOPPED, STOPPED);
        while (!todo.isEmpty()) {
            ReplicaState s = todo.poll();
            for (ReplicaState n : LEGAL.get(s)) {
                if (cameFrom.putIfAbsent(n, s) == null) {
                    todo.add(n);
                }
            }
        }
        assertNotNull(cameFrom.get(target), target + " cannot be reached from STOPPED");
        List<ReplicaState> path = new ArrayList<>();
        for (ReplicaState s = target; s != STOPPED; s = cameFrom.get(s)) {
            path.add(0, s);
        }
        QueueReplica q = queue();
        for (ReplicaState s : path) {
            q.transition(s, "on the way to " + target);
        }
        assertEquals(target, q.state());
        return q;
    }
}
