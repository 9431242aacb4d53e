package io.queueenterprise.operator.failover;

import java.util.List;

/** What {@link FailoverPlanner} decided for one reconcile; {@link FailoverExecutor} carries it out. */
public sealed interface Plan {

    /** The recorded leader leads at the recorded term and every reachable replica follows it. */
    record Steady(String leader, long term) implements Plan {
    }

    /**
     * Make {@code candidate} leader at {@code term}: record the term in status, fence {@code formerLeader} (null at
     * bootstrap), promote, then re-point {@code followers}.
     *
     * @param dominates false when no reachable replica held the highest durable index of every queue: the
     *                  candidate leads on the first queues' order, and excerpts only others held may be lost
     */
    record Elect(String candidate, long term, String formerLeader, List<String> followers, boolean dominates,
                 String why) implements Plan {
        public Elect {
            followers = List.copyOf(followers);
        }
    }

    /** The leader is fine; these reachable replicas do not follow it at its term yet. */
    record Repoint(String leader, long term, List<String> replicas) implements Plan {
        public Repoint {
            replicas = List.copyOf(replicas);
        }
    }

    /** Fewer than a majority answered: no decision is safe (an acknowledged excerpt may sit only on the silent ones). */
    record NoQuorum(int reachable, int needed, String why) implements Plan {
    }
}
