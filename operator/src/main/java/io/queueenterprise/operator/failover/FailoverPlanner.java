package io.queueenterprise.operator.failover;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.queueenterprise.operator.model.QueueClusterModel;

/**
 * The failover decision as a pure function of what the operator recorded (term, leader) and what it observed of
 * every replica (CloudNativePG's rule: never trust a pod's claim, ask every instance, promote the most advanced).
 *
 * <ul>
 *   <li>A replica answers as LEADER at the recorded term: {@link Plan.Steady}, or {@link Plan.Repoint} for reachable
 *       replicas not following it at that term (a restarted former leader, a new replica). That replica is normally
 *       the recorded leader, or the candidate of a failover an operator restart interrupted after promoting.</li>
 *   <li>Otherwise (lost, unreachable, or no longer leading at that term; or no leader yet) and at least a majority of
 *       all replicas answer: {@link Plan.Elect} of the replica with the highest durable index of every queue (ties:
 *       lowest ordinal; the former leader too, when it answers), at a term above every term recorded or reported.</li>
 *   <li>Fewer than a majority answer: {@link Plan.NoQuorum}; a quorum-acknowledged excerpt is held by a majority,
 *       so only a majority's answers are sure to include it.</li>
 * </ul>
 */
public final class FailoverPlanner {
    /** Replica states that disqualify a candidate: its copy stopped short of what it acknowledged, or is unusable. */
    private static final Set<String> UNFIT_STATES = Set.of("CORRUPTED", "BEHIND_RETENTION");

    private FailoverPlanner() {
    }

    /**
     * @param replicas      every replica's name, in ordinal order
     * @param queues        queue names in configuration order (the tie-break order when no replica dominates)
     * @param recordedTerm  status.term: the highest term this operator ever issued (0 when none)
     * @param recordedLeader status.leader, null before the first election
     * @param observations  one per replica
     */
    public static Plan plan(List<String> replicas, List<String> queues, long recordedTerm, String recordedLeader,
                            Map<String, ReplicaObservation> observations) {
        List<ReplicaObservation.Reachable> reachable = new ArrayList<>();
        long highestTerm = recordedTerm;
        for (String replica : replicas) {
            if (observations.get(replica) instanceof ReplicaObservation.Reachable answer) {
                reachable.add(answer);
                highestTerm = Math.max(highestTerm, answer.status().term());
            }
        }
        // a term has at most one leader (only the operator issues terms, one promote each): whoever leads at the
        // recorded term is the leader, even when status does not name it yet (an operator restarted mid-failover)
        ReplicaObservation.Reachable leader = recordedTerm == 0 ? null : reachable.stream()
            .filter(r -> r.status().isLeaderAt(recordedTerm)).findFirst().orElse(null);
        if (leader != null) {
            List<String> stragglers = new ArrayList<>();
            for (ReplicaObservation.Reachable replica : reachable) {
                if (replica != leader && !replica.status().isFollowing(leader.replica(), recordedTerm)) {
                    stragglers.add(replica.replica());
                }
            }
            return stragglers.isEmpty() ? new Plan.Steady(leader.replica(), recordedTerm)
                : new Plan.Repoint(leader.replica(), recordedTerm, stragglers);
        }

        String why = recordedLeader == null ? "no leader yet" : leaderLost(recordedLeader, recordedTerm, observations.get(recordedLeader));
        // a former leader that answers (restarted as STANDBY, fenced) counts like any replica, and may hold the most:
        // promoting another would drop what only it holds; one that does not answer is simply not among them
        List<ReplicaObservation.Reachable> voters = reachable;
        int needed = QueueClusterModel.majority(replicas.size());
        if (voters.size() < needed) {
            return new Plan.NoQuorum(voters.size(), needed, why + "; " + voters.size() + " of " + replicas.size()
                + " replicas answered, a majority (" + needed + ") is needed to choose a new leader safely");
        }
        List<ReplicaObservation.Reachable> fit = voters.stream().filter(r -> fit(r.status())).toList();
        if (fit.isEmpty()) {
            return new Plan.NoQuorum(0, 1, why + "; every answering replica has a queue CORRUPTED or BEHIND_RETENTION");
        }
        ReplicaObservation.Reachable candidate = fit.stream().min(Comparator.comparing(ReplicaObservation.Reachable::status,
            byDurableIndexes(queues)).thenComparingInt(r -> replicas.indexOf(r.replica()))).orElseThrow();
        boolean dominates = voters.stream().allMatch(other -> queues.stream()
            .allMatch(queue -> candidate.status().durableIndex(queue) >= other.status().durableIndex(queue)));
        List<String> followers = replicas.stream().filter(r -> !r.equals(candidate.replica())).toList();
        return new Plan.Elect(candidate.replica(), highestTerm + 1, recordedLeader, followers, dominates,
            why + "; " + candidate.replica() + " holds the highest durable index among " + voters.size() + " answering replicas");
    }

    /**
     * Of replicas whose final statuses are known ({@code statuses}, e.g. their fence answers), the one with the highest
     * durable index of every queue in order; ties go to {@code preferred}, then to the first in {@code statuses}' order.
     * Never one with a CORRUPTED or BEHIND_RETENTION queue; if every one has such a queue now, {@code preferred}.
     */
    static String mostAdvanced(Map<String, NodeStatusView> statuses, List<String> queues, String preferred) {
        List<String> names = new ArrayList<>(statuses.keySet());
        return names.stream().filter(r -> fit(statuses.get(r)))
            .min(Comparator.comparing(statuses::get, byDurableIndexes(queues))
                .thenComparing(r -> !r.equals(preferred)).thenComparingInt(names::indexOf))
            .orElse(preferred);
    }

    /** Higher durable index first, queue by queue in configuration order. */
    private static Comparator<NodeStatusView> byDurableIndexes(List<String> queues) {
        Comparator<NodeStatusView> order = Comparator.comparingInt(status -> 0);
        for (String queue : queues) {
            order = order.thenComparing(status -> status.durableIndex(queue), Comparator.reverseOrder());
        }
        return order;
    }

    /** A replica may lead: none of its queues is CORRUPTED or BEHIND_RETENTION. */
    private static boolean fit(NodeStatusView status) {
        return status.queues().stream().noneMatch(q -> UNFIT_STATES.contains(q.state()));
    }

    private static String leaderLost(String leader, long term, ReplicaObservation observation) {
        if (observation instanceof ReplicaObservation.Reachable answer) {
            return "leader " + leader + " no longer leads at term " + term + " (reports " + answer.status().role()
                + " at term " + answer.status().term() + ")";
        }
        if (observation instanceof ReplicaObservation.Lost lost) {
            return "leader " + leader + " lost: " + lost.reason();
        }
        return "leader " + leader + " not observed";
    }
}
