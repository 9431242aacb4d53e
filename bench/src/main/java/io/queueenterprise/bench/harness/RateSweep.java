package io.queueenterprise.bench.harness;

import io.queueenterprise.bench.subject.SubjectFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Finds the highest offered rate at which the configured percentile stays under the bound for each
 * subject at one message size: a JIT warm-up run per subject, then coarse 1-2-5 steps (continued
 * past the main bound until the rate is not kept, so the latency-for-throughput curve is drawn),
 * then a binary search (geometric midpoints) between the last passing and the first failing coarse
 * rate until hi/lo <= 1 + resolution. Every point runs {@code runs} times; the worst run counts.
 *
 * <p>Fairness: everything is done in rounds. In a round every subject still racing runs once (its
 * next coarse rate, or its next midpoint), in an order drawn afresh per round from
 * {@code orderSeed}; so bursts of machine noise, and whatever a run leaves behind, fall on no
 * subject systematically. Each subject runs in its own JVM ({@link SubjectWorkers}) and the JVM
 * that ran is quiesced before the next run starts.
 */
public final class RateSweep {

    /** A point whose achieved rate is below this fraction of the offered one is saturated. */
    static final double SATURATED = 0.8;

    private final BenchConfig config;
    private final SubjectWorkers workers;
    private final Progress progress;
    private final Random order;
    private final long deadlineNanos;
    private boolean timeLimitHit;

    public RateSweep(BenchConfig config, SubjectWorkers workers, Progress progress, long startNanos) {
        this.config = config;
        this.workers = workers;
        this.progress = progress;
        this.order = new Random(config.orderSeed);
        this.deadlineNanos = config.timeLimitSeconds > 0
                ? startNanos + (long) (config.timeLimitSeconds * 1e9) : Long.MAX_VALUE;
    }

    /** Planned runs for one sweep (an estimate for the progress bar). */
    public static long plannedRuns(BenchConfig c) {
        int coarse = c.coarseRates().size();
        int search = (int) Math.ceil(Math.log(Math.log(2.5) / Math.log(1 + c.resolution)) / Math.log(2));
        return 1 + (long) (coarse + Math.max(search, 0)) * c.runs;
    }

    /** Whether the time limit stopped a sweep early. */
    public boolean timeLimitHit() {
        return timeLimitHit;
    }

    private boolean outOfTime() {
        if (System.nanoTime() > deadlineNanos) {
            timeLimitHit = true;
        }
        return timeLimitHit;
    }

    /** Sweeps every subject at one size on {@code java}. */
    public List<SweepResult> sweepAll(List<SubjectFactory> factories, int size, String java) throws Exception {
        List<State> states = new ArrayList<>();
        for (SubjectFactory f : factories) {
            states.add(new State(f, size));
        }
        List<State> warm = new ArrayList<>(states);
        Collections.shuffle(warm, order);
        for (State st : warm) {
            progress.message(st.label + ": JIT warm-up");
            workers.run(st.factory, java, size, config.warmupRate, config.warmupSeconds, 0.05);
            progress.step(st.label + " warm-up");
        }
        for (double rate : config.coarseRates()) {
            List<State> racing = new ArrayList<>();
            for (State st : states) {
                if (!st.coarseDone) {
                    st.pending = rate;
                    racing.add(st);
                }
            }
            if (racing.isEmpty() || outOfTime()) {
                break;
            }
            for (State st : round(racing, java, "coarse")) {
                st.coarse(st.last);
            }
        }
        while (!outOfTime()) {
            List<State> searching = new ArrayList<>();
            for (State st : states) {
                if (st.lo != null && st.hi != null && st.hi / st.lo > 1 + config.resolution) {
                    st.pending = Math.sqrt(st.lo * st.hi);
                    searching.add(st);
                }
            }
            if (searching.isEmpty()) {
                break;
            }
            for (State st : round(searching, java, "search")) {
                st.points.add(st.last);
                if (st.last.passes(config.boundNs)) {
                    st.lo = st.pending;
                } else {
                    st.hi = st.pending;
                }
            }
        }
        List<SweepResult> out = new ArrayList<>();
        for (State st : states) {
            out.add(result(st, java));
        }
        return out;
    }

    /** Every state runs its pending rate {@code runs} times, each repetition in a fresh random order. */
    private List<State> round(List<State> states, String java, String phase) throws Exception {
        Map<State, List<RunResult>> runs = new LinkedHashMap<>();
        for (State st : states) {
            runs.put(st, new ArrayList<>());
        }
        for (int r = 0; r < config.runs; r++) {
            List<State> shuffled = new ArrayList<>(states);
            Collections.shuffle(shuffled, order);
            for (State st : shuffled) {
                progress.message(String.format("%s @ %s msg/s run %d/%d", st.label, fmtRate(st.pending), r + 1, config.runs));
                runs.get(st).add(workers.run(st.factory, java, st.size, st.pending, config.runWarmupSeconds,
                        config.durationSeconds));
                progress.step(String.format("%s @ %s", st.label, fmtRate(st.pending)));
            }
        }
        for (State st : states) {
            st.last = PointResult.of(st.pending, phase, runs.get(st), config.boundNs);
            progress.message(String.format("%s @ %s msg/s: p%s %.1f us%s", st.label, fmtRate(st.pending),
                    fmtPct(config.percentile), st.last.valueAtPercentileNs() / 1000.0,
                    st.last.rateKept() ? "" : " (RATE NOT KEPT)"));
        }
        return states;
    }

    private final class State {
        final SubjectFactory factory;
        final int size;
        final String label;
        final List<PointResult> points = new ArrayList<>();
        Double lo;
        Double hi;
        boolean allPassedSoFar = true;
        int notKept;
        boolean coarseDone;
        double pending;
        PointResult last;

        State(SubjectFactory factory, int size) {
            this.factory = factory;
            this.size = size;
            this.label = factory.name() + " " + size + "B";
        }

        void coarse(PointResult p) {
            points.add(p);
            if (allPassedSoFar && p.passes(config.boundNs)) {
                lo = p.offeredRate();
            } else if (hi == null) {
                hi = p.offeredRate();
                allPassedSoFar = false;
            }
            // two consecutive saturated points (achieved or received < 80% of offered: the
            // subject's capacity, not a noise burst, which costs a few %) end the coarse sweep. A
            // high percentile alone does not stop it, so the latency-for-throughput curve is complete.
            boolean saturated = Math.min(p.achievedRate(), p.receivedRate()) < SATURATED * p.offeredRate();
            notKept = saturated ? notKept + 1 : 0;
            coarseDone = notKept >= 2;
        }
    }

    private SweepResult result(State st, String java) {
        List<PointResult> points = st.points;
        points.sort(Comparator.comparingDouble(PointResult::offeredRate));
        Double highest = SweepResult.highestPassing(points, config.boundNs);
        boolean searchOpen = st.lo != null && st.hi != null && st.hi / st.lo > 1 + config.resolution;
        String status = highest == null ? (points.isEmpty() ? "time-limit" : "unreachable")
                : searchOpen ? "time-limit" : st.hi == null ? "at-max-rate" : "ok";
        Map<String, Double> ladder = new LinkedHashMap<>();
        Map<String, Double> best = new LinkedHashMap<>();
        for (int us : config.ladderUs) {
            ladder.put(Integer.toString(us), SweepResult.highestPassing(points, us * 1000L));
            best.put(Integer.toString(us), SweepResult.bestPassing(points, us * 1000L));
        }
        progress.message(String.format("%s: highest rate at p%s <= %.0f us: %s", st.label, fmtPct(config.percentile),
                config.boundNs / 1000.0, highest == null ? "unreachable" : fmtRate(highest)));
        double maxAchieved = points.stream().mapToDouble(PointResult::achievedRate).max().orElse(0);
        Double capacity = points.stream().filter(PointResult::rateKept).map(PointResult::receivedRate)
                .max(Double::compare).orElse(null);
        Outliers.Summary outliers = null;
        for (PointResult p : points) {
            if (!p.rateKept()) {
                continue; // past saturation every message is late by the backlog: nothing to attribute
            }
            for (RunResult r : p.runs()) {
                if (r.outliers() != null) {
                    outliers = outliers == null ? r.outliers() : outliers.plus(r.outliers());
                }
            }
        }
        return new SweepResult(st.factory.name(), st.factory.role().name(), st.size, java, status, highest, ladder,
                best, maxAchieved, capacity, outliers, List.copyOf(points));
    }

    public static String fmtRate(double r) {
        if (r >= 1e6) {
            return String.format("%.2fM", r / 1e6);
        }
        if (r >= 1e3) {
            return String.format("%.0fK", r / 1e3);
        }
        return String.format("%.0f", r);
    }

    public static String fmtPct(double p) {
        return p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p);
    }
}
