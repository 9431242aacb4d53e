package io.queueenterprise.operator.failover;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Carries out a {@link Plan} through the nodes' admin endpoints, in the order that keeps it safe: record the term,
 * fence every replica that answers (the former leader first), promote the most advanced of them by their fence
 * answers, re-point the others. A step that fails leaves a state the next reconcile's plan
 * resumes from (a failed promote is retried at a higher term; a replica not re-pointed is re-pointed later).
 */
public final class FailoverExecutor {
    private FailoverExecutor() {
    }

    /** What happened; {@code problems} are the steps that did not succeed (one line each). */
    public record Outcome(String leader, long term, boolean leaderInPlace, List<String> problems) {
        public Outcome {
            problems = List.copyOf(problems);
        }
    }

    public static Outcome execute(Plan plan, List<String> queues, Map<String, AdminClient> nodes, ElectionRecorder recorder) {
        if (plan instanceof Plan.Steady steady) {
            // status may not name it yet (an operator restarted between promote and recording the leader)
            recorder.recordLeader(steady.leader(), steady.term());
            return new Outcome(steady.leader(), steady.term(), true, List.of());
        }
        if (plan instanceof Plan.NoQuorum noQuorum) {
            return new Outcome(null, 0, false, List.of(noQuorum.why()));
        }
        if (plan instanceof Plan.Repoint repoint) {
            List<String> problems = new ArrayList<>();
            follow(repoint.replicas(), repoint.leader(), repoint.term(), nodes, problems);
            recorder.recordLeader(repoint.leader(), repoint.term());
            return new Outcome(repoint.leader(), repoint.term(), true, problems);
        }
        return elect((Plan.Elect) plan, queues, nodes, recorder);
    }

    private static Outcome elect(Plan.Elect plan, List<String> queues, Map<String, AdminClient> nodes,
                                 ElectionRecorder recorder) {
        List<String> problems = new ArrayList<>();
        // 1. the term is ours before any node hears of it; throws (and nothing else happens) if it cannot be recorded
        recorder.recordTerm(plan);
        // 2. every replica that answers is fenced at the new term, the former leader first: a fenced node follows no
        //    one, so a former leader that still runs (a pod being deleted, a leader we cannot reach but its followers
        //    can) gathers no majority from here on. The plan's indexes were read before this: meanwhile such a leader
        //    could have had an excerpt quorum-acknowledged by a follower other than the plan's candidate. Each fence
        //    answers with the node's final durable indexes, and the choice is made again from those.
        List<String> replicas = new ArrayList<>();
        if (plan.formerLeader() != null) {
            replicas.add(plan.formerLeader());
        }
        replicas.add(plan.candidate());
        replicas.addAll(plan.followers());
        replicas = replicas.stream().distinct().toList();
        Map<String, NodeStatusView> fenced = new LinkedHashMap<>();
        for (String replica : replicas) {
            AdminClient node = nodes.get(replica);
            if (node == null) {
                continue; // not reachable: the new term fences it when it answers again (it is re-pointed then)
            }
            try {
                fenced.put(replica, node.fence(plan.term()));
            } catch (AdminException e) {
                problems.add("fence " + e.getMessage());
            }
        }
        int majority = replicas.size() / 2 + 1;
        if (fenced.size() < majority) {
            problems.add("elect at term " + plan.term() + ": " + fenced.size() + " of " + replicas.size()
                + " replicas fenced, a majority (" + majority + ") is needed to choose from their final indexes");
            return new Outcome(null, plan.term(), false, problems);
        }
        // 3. promote the most advanced of the fenced (the plan's candidate unless another now holds more)
        String chosen = FailoverPlanner.mostAdvanced(fenced, queues, plan.candidate());
        try {
            nodes.get(chosen).promote(plan.term());
        } catch (AdminException e) {
            problems.add("promote " + e.getMessage());
            return new Outcome(null, plan.term(), false, problems);
        }
        // 4. the others follow; an unreachable one is re-pointed when it answers again
        follow(replicas.stream().filter(r -> !r.equals(chosen)).toList(), chosen, plan.term(), nodes, problems);
        recorder.recordLeader(chosen, plan.term());
        return new Outcome(chosen, plan.term(), true, problems);
    }

    /**
     * A planned handover from a live leader (rolling update): record the term, fence the leader, and promote the
     * candidate only if it holds everything the fenced leader holds (the fence's answer is the leader's final
     * state); otherwise the former leader is promoted back at a term above it, so that a switchover never loses an
     * excerpt. A leader that cannot be fenced stops the switchover before any promote.
     */
    public static Outcome switchover(Plan.Elect plan, List<String> queues, Map<String, AdminClient> nodes, ElectionRecorder recorder) {
        List<String> problems = new ArrayList<>();
        recorder.recordTerm(plan);
        AdminClient former = nodes.get(plan.formerLeader());
        AdminClient candidate = nodes.get(plan.candidate());
        if (former == null || candidate == null) {
            problems.add("switchover: no admin endpoint address for " + (former == null ? plan.formerLeader() : plan.candidate()));
            return new Outcome(null, plan.term(), false, problems);
        }
        NodeStatusView fenced;
        NodeStatusView candidateStatus;
        try {
            fenced = former.fence(plan.term());
            candidateStatus = candidate.status();
        } catch (AdminException e) {
            problems.add("switchover " + e.getMessage());
            return new Outcome(null, plan.term(), false, problems);
        }
        boolean caughtUp = queues.stream().allMatch(queue -> candidateStatus.durableIndex(queue) >= fenced.durableIndex(queue));
        Plan.Elect effective = plan;
        if (!caughtUp) {
            // the fenced leader has seen the term: it can only be promoted back at a higher one, recorded first
            problems.add("switchover: " + plan.candidate() + " fell behind the fenced leader; " + plan.formerLeader() + " keeps leading");
            effective = new Plan.Elect(plan.formerLeader(), plan.term() + 1, null, plan.followers(), true, "switchover abandoned");
            recorder.recordTerm(effective);
        }
        String leader = effective.candidate();
        try {
            nodes.get(leader).promote(effective.term());
        } catch (AdminException e) {
            problems.add("promote " + e.getMessage());
            return new Outcome(null, effective.term(), false, problems);
        }
        List<String> followers = new ArrayList<>(plan.followers());
        followers.add(plan.candidate());
        followers.remove(leader);
        follow(followers.stream().distinct().toList(), leader, effective.term(), nodes, problems);
        recorder.recordLeader(leader, effective.term());
        return new Outcome(leader, effective.term(), true, problems);
    }

    private static void follow(List<String> replicas, String leader, long term, Map<String, AdminClient> nodes,
                               List<String> problems) {
        for (String replica : replicas) {
            AdminClient node = nodes.get(replica);
            if (node == null) {
                problems.add("follow " + replica + ": no admin endpoint address");
                continue;
            }
            try {
                node.follow(leader, term);
            } catch (AdminException e) {
                problems.add("follow " + e.getMessage());
            }
        }
    }
}
