package io.queueenterprise.operator.failover;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.queueenterprise.operator.model.QueueClusterModel;

/**
 * Rolling updates, followers first and the leader last with a switchover (the StatefulSet uses
 * {@code updateStrategy: OnDelete}; the operator restarts pods one at a time). A pure decision over each pod's
 * revision and what the replicas report:
 * <ol>
 *   <li>every pod at the StatefulSet's update revision: {@link UpToDate};</li>
 *   <li>the leader not answering, not leading at the term or with a queue not LIVE: {@link Wait} (failover's
 *       business, not a rollout's);</li>
 *   <li>followers out of place (not answering, not following the leader at the term, a queue not LIVE): when each
 *       of them runs an OUTDATED pod and the leader and the other followers still make a majority, {@link Restart}
 *       of the highest-ordinal one — it is out already, so restarting it cannot make things worse, and the new
 *       revision may be what mends it (a configuration that crash-looped, fixed by the user: without this the
 *       rollout would wait forever for a replica only the rollout can restart; Strimzi's roller restarts unready
 *       pods first for the same reason). Otherwise {@link Wait}: one disruption at a time, a replica coming back
 *       at the update revision is waited for;</li>
 *   <li>an outdated follower: {@link Restart} of the highest-ordinal one;</li>
 *   <li>only the leader outdated: {@link Switchover} to the follower with the highest durable index of every queue,
 *       once it holds everything the leader holds ({@link Wait} until then).</li>
 * </ol>
 */
public final class RollingUpdatePlanner {
    private RollingUpdatePlanner() {
    }

    /** What to do next. */
    public sealed interface Step {
    }

    public record UpToDate() implements Step {
    }

    public record Wait(String reason) implements Step {
    }

    /** Delete this replica's pod: the StatefulSet controller recreates it at the update revision. */
    public record Restart(String replica) implements Step {
    }

    /** Hand leadership over (fence the leader, then promote), then restart the former leader on a later step. */
    public record Switchover(Plan.Elect plan) implements Step {
    }

    /**
     * @param podRevisions   replica → its pod's {@code controller-revision-hash} (absent: no pod)
     * @param updateRevision the StatefulSet's {@code status.updateRevision}
     */
    public static Step next(List<String> replicas, List<String> queues, long term, String leader,
                            Map<String, String> podRevisions, String updateRevision, Map<String, ReplicaObservation> observations) {
        List<String> outdated = replicas.stream().filter(r -> podRevisions.containsKey(r) && !updateRevision.equals(podRevisions.get(r))).toList();
        if (outdated.isEmpty() || updateRevision == null) {
            return new UpToDate();
        }
        long highestTerm = term;
        List<String> outOfPlace = new ArrayList<>();
        List<String> why = new ArrayList<>();
        for (String replica : replicas) {
            if (!(observations.get(replica) instanceof ReplicaObservation.Reachable answer)) {
                outOfPlace.add(replica);
                why.add(replica + " is not answering");
                continue;
            }
            NodeStatusView status = answer.status();
            highestTerm = Math.max(highestTerm, status.term());
            boolean inPlace = replica.equals(leader) ? status.isLeaderAt(term) : status.isFollowing(leader, term);
            if (!inPlace || status.queues().stream().anyMatch(q -> !"LIVE".equals(q.state()))) {
                outOfPlace.add(replica);
                why.add(replica + " is " + status.role() + " at term " + status.term() + " and not live");
            }
        }
        if (outOfPlace.contains(leader)) {
            return new Wait(String.join("; ", why) + ": rolling waits for the leader");
        }
        if (!outOfPlace.isEmpty()) {
            boolean allOutdated = outOfPlace.stream().allMatch(outdated::contains);
            int inPlace = replicas.size() - outOfPlace.size();
            if (allOutdated && inPlace >= QueueClusterModel.majority(replicas.size())) {
                return new Restart(outOfPlace.get(outOfPlace.size() - 1));
            }
            return new Wait(String.join("; ", why) + (allOutdated ? ": too few replicas in place to restart one"
                : ": rolling waits for a replica at the update revision to come back"));
        }
        for (int ordinal = replicas.size() - 1; ordinal >= 0; ordinal--) {
            String replica = replicas.get(ordinal);
            if (outdated.contains(replica) && !replica.equals(leader)) {
                return new Restart(replica);
            }
        }
        NodeStatusView leaderStatus = ((ReplicaObservation.Reachable) observations.get(leader)).status();
        String candidate = null;
        for (String replica : replicas) {
            if (replica.equals(leader)) {
                continue;
            }
            NodeStatusView status = ((ReplicaObservation.Reachable) observations.get(replica)).status();
            if (candidate == null || dominates(status, ((ReplicaObservation.Reachable) observations.get(candidate)).status(), queues)) {
                candidate = replica;
            }
        }
        if (candidate == null) {
            return new Restart(leader);   // a single replica: nobody to hand over to
        }
        NodeStatusView candidateStatus = ((ReplicaObservation.Reachable) observations.get(candidate)).status();
        for (String queue : queues) {
            if (candidateStatus.durableIndex(queue) < leaderStatus.durableIndex(queue)) {
                return new Wait("switchover candidate " + candidate + " is behind the leader on " + queue);
            }
        }
        List<String> followers = new ArrayList<>(replicas);
        followers.remove(candidate);
        return new Switchover(new Plan.Elect(candidate, highestTerm + 1, leader, followers, true,
            "switchover from " + leader + " for a rolling update"));
    }

    /** Strictly ahead on the first queue that differs (configuration order). */
    private static boolean dominates(NodeStatusView challenger, NodeStatusView holder, List<String> queues) {
        for (String queue : queues) {
            long difference = challenger.durableIndex(queue) - holder.durableIndex(queue);
            if (difference != 0) {
                return difference > 0;
            }
        }
        return false;
    }
}
