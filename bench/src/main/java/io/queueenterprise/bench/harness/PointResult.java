package io.queueenterprise.bench.harness;

import java.util.List;

/**
 * One offered rate of a sweep: several runs, the worst one counts.
 *
 * @param offeredRate         msg/s
 * @param phase               {@code coarse} or {@code search}
 * @param achievedRate        the lowest rate the producer achieved in its runs
 * @param receivedRate        the lowest rate the consumer received in its runs
 * @param rateKept            every run kept the rate
 * @param samples             samples over all runs
 * @param valueAtPercentileNs the worst run's latency at the configured percentile
 * @param passes              rateKept and valueAtPercentileNs <= bound
 * @param worstRun            index into runs of the worst run
 * @param latencyNs           the worst run's percentiles
 * @param runs                every run
 */
public record PointResult(double offeredRate, String phase, double achievedRate, double receivedRate, boolean rateKept,
                          long samples, long valueAtPercentileNs, boolean passes, int worstRun,
                          Percentiles latencyNs, List<RunResult> runs) {

    static PointResult of(double rate, String phase, List<RunResult> runs, long boundNs) {
        int worst = 0;
        boolean kept = true;
        long samples = 0;
        double achieved = Double.MAX_VALUE;
        double receivedRate = Double.MAX_VALUE;
        for (int i = 0; i < runs.size(); i++) {
            RunResult r = runs.get(i);
            if (r.valueAtPercentileNs() > runs.get(worst).valueAtPercentileNs()) {
                worst = i;
            }
            kept &= r.rateKept();
            samples += r.received();
            achieved = Math.min(achieved, r.achievedRate());
            receivedRate = Math.min(receivedRate, r.receivedRate());
        }
        RunResult w = runs.get(worst);
        return new PointResult(rate, phase, achieved, receivedRate, kept, samples, w.valueAtPercentileNs(),
                kept && w.valueAtPercentileNs() <= boundNs, worst, w.latencyNs(), List.copyOf(runs));
    }

    /** Passes a given bound (ns) at the configured percentile. */
    public boolean passes(long boundNs) {
        return rateKept && valueAtPercentileNs <= boundNs;
    }
}
