package io.queueenterprise.bench.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * Whether this harness and JLBH agree at the cross-check's operating point, judged against the
 * machine's own noise there rather than a fixed tolerance.
 *
 * <p>The rule, per percentile (p50 and p99):
 * <ul>
 *   <li>each instrument's figure is the median over its runs (not the worst run: one noise burst
 *       must not decide a comparison of two instruments);</li>
 *   <li>the noise is each instrument's spread over its own runs at this point, max / min; the bound
 *       is {@code k = max(RATIO_FLOOR, spread of JLBH, spread of this harness)};</li>
 *   <li>they agree when harness / JLBH lies in {@code [1/k, k]}, or when the two differ by at most
 *       {@link #ABSOLUTE_FLOOR_NS} (below a microsecond the two instruments' own costs, nanoTime
 *       and histogram resolution, are not told apart).</li>
 * </ul>
 * A point at which any run of either instrument did not keep the offered rate is past the
 * machine's capacity (or a stall built a backlog): both figures then measure the backlog, which
 * the two instruments accumulate differently, so it is NOT_COMPARABLE rather than a disagreement.
 *
 * @param status      the verdict
 * @param reason      one line saying why, with both figures and the bound
 * @param comparisons per percentile compared (empty when not comparable)
 */
public record CrossCheckVerdict(Status status, String reason, List<Comparison> comparisons) {

    /** The ratio bound never narrower than this: two runs of one instrument differ by this much on a quiet machine. */
    public static final double RATIO_FLOOR = 2.0;
    /** Figures closer than this (ns) agree whatever their ratio. */
    public static final long ABSOLUTE_FLOOR_NS = 1_000;

    /** AGREE, DISAGREE (beyond the machine's noise) or NOT_COMPARABLE (past capacity, or no runs). */
    public enum Status { AGREE, DISAGREE, NOT_COMPARABLE }

    /** One run of either instrument, as far as the verdict needs it (-1 = the instrument gave no value). */
    public record Run(long p50Ns, long p99Ns, boolean rateKept) {
    }

    /**
     * One percentile compared.
     *
     * @param percentile    {@code p50} or {@code p99}
     * @param jlbhNs        JLBH's median over its runs
     * @param harnessNs     this harness's median over its runs
     * @param ratio         harnessNs / jlbhNs
     * @param bound         k: agreement is a ratio within [1/k, k]
     * @param jlbhSpread    max / min over JLBH's runs
     * @param harnessSpread max / min over this harness's runs
     * @param agree         within the bound (or within the absolute floor)
     */
    public record Comparison(String percentile, long jlbhNs, long harnessNs, double ratio, double bound,
                             double jlbhSpread, double harnessSpread, boolean agree) {
        String inWords() {
            return String.format("%s: qe bench %s vs JLBH %s = x%.2f, %s [1/%.1f, %.1f]", percentile, us(harnessNs),
                    us(jlbhNs), ratio, agree ? "within" : "OUTSIDE", bound, bound);
        }
    }

    /** Judges the runs of both instruments at one point. */
    public static CrossCheckVerdict judge(List<Run> jlbh, List<Run> harness) {
        if (jlbh.isEmpty() || harness.isEmpty()) {
            return new CrossCheckVerdict(Status.NOT_COMPARABLE, "not comparable: "
                    + (jlbh.isEmpty() ? "JLBH" : "this harness") + " reported no run", List.of());
        }
        long harnessBehind = harness.stream().filter(r -> !r.rateKept()).count();
        long jlbhBehind = jlbh.stream().filter(r -> !r.rateKept()).count();
        if (harnessBehind > 0 || jlbhBehind > 0) {
            return new CrossCheckVerdict(Status.NOT_COMPARABLE, String.format("not comparable (past capacity): %d of %d"
                            + " qe bench runs and %d of %d JLBH runs did not keep the rate (producer behind schedule or"
                            + " a growing backlog), so both figures measure the backlog, not the queue", harnessBehind,
                    harness.size(), jlbhBehind, jlbh.size()), List.of());
        }
        List<Comparison> comparisons = new ArrayList<>();
        compare("p50", Run::p50Ns, jlbh, harness, comparisons);
        compare("p99", Run::p99Ns, jlbh, harness, comparisons);
        if (comparisons.isEmpty()) {
            return new CrossCheckVerdict(Status.NOT_COMPARABLE, "not comparable: no percentile reported by both",
                    List.of());
        }
        boolean agree = comparisons.stream().allMatch(Comparison::agree);
        StringBuilder why = new StringBuilder(agree ? "agree within the machine's noise: " : "DISAGREE beyond the"
                + " machine's noise: ");
        for (int i = 0; i < comparisons.size(); i++) {
            why.append(i == 0 ? "" : "; ").append(comparisons.get(i).inWords());
        }
        return new CrossCheckVerdict(agree ? Status.AGREE : Status.DISAGREE, why.toString(), List.copyOf(comparisons));
    }

    private static void compare(String name, ToLongFunction<Run> value, List<Run> jlbh, List<Run> harness,
                                List<Comparison> into) {
        long[] j = values(jlbh, value);
        long[] h = values(harness, value);
        if (j.length == 0 || h.length == 0) {
            return; // JLBH leaves a percentile out when a run is too short for it
        }
        long jm = median(j);
        long hm = median(h);
        double js = spread(j);
        double hs = spread(h);
        double bound = Math.max(RATIO_FLOOR, Math.max(js, hs));
        double ratio = (double) Math.max(1, hm) / Math.max(1, jm);
        boolean agree = Math.abs(hm - jm) <= ABSOLUTE_FLOOR_NS || (ratio >= 1 / bound && ratio <= bound);
        into.add(new Comparison(name, jm, hm, ratio, bound, js, hs, agree));
    }

    private static long[] values(List<Run> runs, ToLongFunction<Run> value) {
        return runs.stream().mapToLong(value).filter(v -> v >= 0).sorted().toArray();
    }

    /** The middle value; of an even count the lower of the two middle ones. */
    static long median(long[] sorted) {
        return sorted[(sorted.length - 1) / 2];
    }

    /** max / min of one instrument's runs (1 for a single run). */
    static double spread(long[] sorted) {
        return (double) Math.max(1, sorted[sorted.length - 1]) / Math.max(1, sorted[0]);
    }

    private static String us(long ns) {
        return ns >= 10_000 ? String.format("%.0f us", ns / 1e3) : String.format("%.1f us", ns / 1e3);
    }
}
