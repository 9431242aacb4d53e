package io.queueenterprise.bench.harness;

import io.queueenterprise.bench.subject.SubjectFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds the highest offered rate at which the configured percentile stays under the bound for one
 * subject and message size: a JIT warm-up run, then coarse 1-2-5 steps (continued past the main
 * bound until the rate is not kept, so the latency-for-throughput curve is drawn), then a
 * binary search (geometric midpoints) between the last passing and the first failing coarse rate
 * until hi/lo <= 1 + resolution. Every point runs {@code runs} times; the worst run counts.
 */
public final class RateSweep {

    /** A point whose achieved rate is below this fraction of the offered one is saturated. */
    static final double SATURATED = 0.8;

    private final BenchConfig config;
    private final Pinning pinning;
    private final Progress progress;

    public RateSweep(BenchConfig config, Pinning pinning, Progress progress) {
        this.config = config;
        this.pinning = pinning;
        this.progress = progress;
    }

    /** Planned runs for one sweep (an estimate for the progress bar). */
    public static long plannedRuns(BenchConfig c) {
        int coarse = c.coarseRates().size();
        int search = (int) Math.ceil(Math.log(Math.log(2.5) / Math.log(1 + c.resolution)) / Math.log(2));
        return 1 + (long) (coarse + Math.max(search, 0)) * c.runs;
    }

    /**
     * Sweeps every subject at one size. The coarse phase is interleaved: at each rate every subject
     * still in the race runs once before the next rate, so bursts of machine noise fall on all
     * subjects alike rather than on whichever one happened to be running; then each subject's own
     * binary search.
     */
    public List<SweepResult> sweepAll(List<SubjectFactory> factories, int size) throws Exception {
        List<State> states = new ArrayList<>();
        for (SubjectFactory f : factories) {
            State st = new State(f, size);
            progress.message(st.label + ": warm-up");
            OpenLoopRun.run(f, size, config.warmupRate, config.warmupSeconds, 0.05, config, pinning);
            progress.step(st.label + " warm-up");
            states.add(st);
        }
        for (double rate : config.coarseRates()) {
            for (State st : states) {
                if (!st.coarseDone) {
                    st.coarse(point(st.factory, size, rate, "coarse", st.label));
                }
            }
        }
        List<SweepResult> out = new ArrayList<>();
        for (State st : states) {
            out.add(search(st));
        }
        return out;
    }

    /** One subject alone (coarse then search). */
    public SweepResult sweep(SubjectFactory factory, int size) throws Exception {
        return sweepAll(List.of(factory), size).get(0);
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
            // two consecutive saturated points (achieved < 80% of offered: the subject's capacity,
            // not a noise burst, which costs a few %) end the coarse sweep. A high percentile alone
            // does not stop it, so the latency-for-throughput curve is complete.
            notKept = p.achievedRate() >= SATURATED * p.offeredRate() ? 0 : notKept + 1;
            coarseDone = notKept >= 2;
        }
    }

    private SweepResult search(State st) throws Exception {
        Double lo = st.lo;
        Double hi = st.hi;
        List<PointResult> points = st.points;
        if (lo != null && hi != null) {
            while (hi / lo > 1 + config.resolution) {
                double mid = Math.sqrt(lo * hi);
                PointResult p = point(st.factory, st.size, mid, "search", st.label);
                points.add(p);
                if (p.passes(config.boundNs)) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
        }
        points.sort(Comparator.comparingDouble(PointResult::offeredRate));
        Double highest = SweepResult.highestPassing(points, config.boundNs);
        String status = highest == null ? "unreachable" : hi == null ? "at-max-rate" : "ok";
        Map<String, Double> ladder = new LinkedHashMap<>();
        Map<String, Double> best = new LinkedHashMap<>();
        for (int us : config.ladderUs) {
            ladder.put(Integer.toString(us), SweepResult.highestPassing(points, us * 1000L));
            best.put(Integer.toString(us), SweepResult.bestPassing(points, us * 1000L));
        }
        progress.message(String.format("%s: highest rate at p%s <= %.0f us: %s", st.label, fmtPct(config.percentile),
                config.boundNs / 1000.0, highest == null ? "unreachable" : fmtRate(highest)));
        double maxAchieved = points.stream().mapToDouble(PointResult::achievedRate).max().orElse(0);
        return new SweepResult(st.factory.name(), st.factory.role().name(), st.size, status, highest, ladder,
                best, maxAchieved, List.copyOf(points));
    }

    private PointResult point(SubjectFactory factory, int size, double rate, String phase, String label)
            throws Exception {
        List<RunResult> runs = new ArrayList<>();
        for (int r = 0; r < config.runs; r++) {
            progress.message(String.format("%s @ %s msg/s run %d/%d", label, fmtRate(rate), r + 1, config.runs));
            runs.add(OpenLoopRun.run(factory, size, rate, config.runWarmupSeconds, config.durationSeconds,
                    config, pinning));
            progress.step(String.format("%s @ %s", label, fmtRate(rate)));
        }
        PointResult p = PointResult.of(rate, phase, runs, config.boundNs);
        progress.message(String.format("%s @ %s msg/s: p%s %.1f us%s", label, fmtRate(rate),
                fmtPct(config.percentile), p.valueAtPercentileNs() / 1000.0,
                p.rateKept() ? "" : " (RATE NOT KEPT)"));
        return p;
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
