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
 * bound up to the largest ladder bound, so the latency-for-throughput curve is drawn), then a
 * binary search (geometric midpoints) between the last passing and the first failing coarse rate
 * until hi/lo <= 1 + resolution. Every point runs {@code runs} times; the worst run counts.
 */
public final class RateSweep {

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

    public SweepResult sweep(SubjectFactory factory, int size) throws Exception {
        String label = factory.name() + " " + size + "B";
        progress.message(label + ": warm-up");
        OpenLoopRun.run(factory, size, config.warmupRate, config.warmupSeconds, 0.05, config, pinning);
        progress.step(label + " warm-up");

        long maxLadderNs = config.ladderUs.stream().mapToLong(u -> u * 1000L).max().orElse(config.boundNs);
        long stopNs = Math.max(maxLadderNs, config.boundNs);
        List<PointResult> points = new ArrayList<>();
        Double lo = null;
        Double hi = null;
        boolean allPassedSoFar = true;
        int stopSignals = 0;
        for (double rate : config.coarseRates()) {
            PointResult p = point(factory, size, rate, "coarse", label);
            points.add(p);
            if (allPassedSoFar && p.passes(config.boundNs)) {
                lo = rate;
            } else if (hi == null) {
                hi = rate;
                allPassedSoFar = false;
            }
            // two consecutive points that miss the rate or exceed the largest ladder bound end the
            // coarse sweep (one alone may be a noise spike on a shared machine)
            stopSignals = !p.rateKept() || p.valueAtPercentileNs() > stopNs ? stopSignals + 1 : 0;
            if (stopSignals >= 2) {
                break;
            }
        }
        if (lo != null && hi != null) {
            while (hi / lo > 1 + config.resolution) {
                double mid = Math.sqrt(lo * hi);
                PointResult p = point(factory, size, mid, "search", label);
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
        for (int us : config.ladderUs) {
            ladder.put(Integer.toString(us), SweepResult.highestPassing(points, us * 1000L));
        }
        return new SweepResult(factory.name(), factory.role().name(), size, status, highest, ladder,
                List.copyOf(points));
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
