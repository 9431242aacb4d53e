package io.queueenterprise.bench.report;

import io.queueenterprise.bench.harness.PointResult;
import io.queueenterprise.bench.harness.SweepResult;

/** Number formatting shared by the console table and the Markdown report. */
final class Fmt {
    private Fmt() {
    }

    static String rate(Double r) {
        if (r == null) {
            return "unreachable";
        }
        if (r >= 1e6) {
            return String.format("%.2f M", r / 1e6);
        }
        return String.format("%.0f K", r / 1e3);
    }

    /** The highest rate at the bound; "≥ rate" when the sweep's ceiling stopped it, not the bound. */
    static String rateAtBound(SweepResult s) {
        if (s.highestRateAtBound() == null) {
            return "-"; // the status column says why
        }
        String r = rate(s.highestRateAtBound());
        return "at-max-rate".equals(s.status()) || "time-limit".equals(s.status()) && s.highestRateAtBound() != null
                ? "≥ " + r : r;
    }

    /** "GC pause 40 %, machine: producer waited for a CPU 35 %, ... (of 1234 over the bound)". */
    static String causes(SweepResult s, io.queueenterprise.bench.harness.BenchConfig c, int top) {
        var o = s.outliers();
        if (o == null) {
            return !c.attribution ? "not attributed (--no-attribution)"
                    : c.consumerProcess && s.points().stream().anyMatch(p -> p.rateKept())
                    ? "not attributed (consumer in another process)" : "no point kept its rate: nothing to attribute";
        }
        if (o.overBound() == 0) {
            return "none";
        }
        StringBuilder sb = new StringBuilder();
        int n = 0;
        for (var e : o.causes().entrySet()) {
            if (n++ == top) {
                break;
            }
            sb.append(String.format("%s %.0f %%; ", e.getKey(), 100.0 * e.getValue() / o.overBound()));
        }
        return sb.append("of ").append(o.overBound()).append(" messages").toString();
    }

    /** Capacity, or "-" where no point kept its rate. */
    static String capacity(Double r) {
        return r == null ? "- (no point kept its rate)" : rate(r);
    }

    /** A bound in µs without a needless ".0": 10, 0.5. */
    static String boundUs(long ns) {
        return pct(ns / 1000.0);
    }

    static String us(long ns) {
        if (ns < 0) {
            return "n/a";
        }
        return ns >= 100_000 ? String.format("%.0f", ns / 1000.0) : String.format("%.1f", ns / 1000.0);
    }

    static String ratio(Double r) {
        return r == null ? "n/a" : String.format("%.2f", r);
    }

    static String pct(double p) {
        return p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p);
    }

    /** The point at the highest passing rate, or null. */
    static PointResult atHighest(SweepResult r) {
        if (r.highestRateAtBound() == null) {
            return null;
        }
        for (PointResult p : r.points()) {
            if (p.offeredRate() == r.highestRateAtBound()) {
                return p;
            }
        }
        return null;
    }

    /** The cross-check's verdict as one prominent line (null: a result recorded before verdicts existed). */
    static String verdictLine(io.queueenterprise.bench.harness.JlbhCrossCheck.Result j) {
        var v = j.verdict();
        if (v == null) {
            return "JLBH cross-check: no verdict (recorded before the cross-check judged agreement)";
        }
        return switch (v.status()) {
            case DISAGREE -> "*** JLBH CROSS-CHECK DISAGREES *** " + v.reason();
            case AGREE -> "JLBH cross-check agrees: " + v.reason();
            case NOT_COMPARABLE -> "JLBH cross-check " + v.reason();
        };
    }

    /** The sweep's own point at the cross-check's subject, size and rate, if the sweep measured one. */
    static PointResult sweepPointAt(io.queueenterprise.bench.harness.BenchResult r,
                                    io.queueenterprise.bench.harness.JlbhCrossCheck.Result j) {
        for (SweepResult s : r.results()) {
            if (s.subject().equals(j.subject()) && s.messageSize() == j.messageSize()) {
                for (PointResult p : s.points()) {
                    if (Math.abs(p.offeredRate() - j.rate()) <= 1e-6 * j.rate()) {
                        return p;
                    }
                }
            }
        }
        return null;
    }
}
