package io.queueenterprise.operator.failover;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Carries out a {@link Plan} through the nodes' admin endpoints, in the order that keeps it safe: record the term,
 * fence the former leader, promote, re-point the others. A step that fails leaves a state the next reconcile's plan
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

    public static Outcome execute(Plan plan, Map<String, AdminClient> nodes, ElectionRecorder recorder) {
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
        return elect((Plan.Elect) plan, nodes, recorder);
    }

    private static Outcome elect(Plan.Elect plan, Map<String, AdminClient> nodes, ElectionRecorder recorder) {
        List<String> problems = new ArrayList<>();
        // 1. the term is ours before any node hears of it; throws (and nothing else happens) if it cannot be recorded
        recorder.recordTerm(plan);
        // 2. the former leader stops accepting appends at once, if it can still hear us; if not, the new term fences it:
        //    every replica refuses its older term from now on
        if (plan.formerLeader() != null && !plan.formerLeader().equals(plan.candidate()) && nodes.containsKey(plan.formerLeader())) {
            try {
                nodes.get(plan.formerLeader()).fence(plan.term());
            } catch (AdminException e) {
                problems.add("fence " + e.getMessage());
            }
        }
        // 3. promote
        AdminClient candidate = nodes.get(plan.candidate());
        if (candidate == null) {
            problems.add("promote " + plan.candidate() + ": no admin endpoint address");
            return new Outcome(null, plan.term(), false, problems);
        }
        try {
            candidate.promote(plan.term());
        } catch (AdminException e) {
            problems.add("promote " + e.getMessage());
            return new Outcome(null, plan.term(), false, problems);
        }
        // 4. the others follow; an unreachable one is re-pointed when it answers again
        follow(plan.followers(), plan.candidate(), plan.term(), nodes, problems);
        recorder.recordLeader(plan.candidate(), plan.term());
        return new Outcome(plan.candidate(), plan.term(), true, problems);
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
