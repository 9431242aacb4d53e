package io.queueenterprise.bench.report;

import io.queueenterprise.bench.harness.BenchResult;
import io.queueenterprise.bench.harness.JdkComparison;
import io.queueenterprise.bench.harness.PointResult;
import io.queueenterprise.bench.harness.SweepResult;

import java.io.PrintStream;
import java.util.Map;

/** The console summary: what a person reads first. */
public final class ConsoleTable {
    private ConsoleTable() {
    }

    public static void print(BenchResult r, PrintStream out) {
        var c = r.configuration();
        String pct = "p" + Fmt.pct(c.percentile);
        String bound = Fmt.boundUs(c.boundNs) + " us";
        out.printf("%nMachine noise before the run: %s%n", r.noise() == null ? "not measured" : r.noise().inWords());
        if (!r.results().isEmpty()) {
            out.printf("%nHighest offered rate at %s <= %s (worst of %d runs per point, open loop);"
                    + " capacity = rate received with the schedule kept, any latency%n", pct, bound, c.runs);
            StringBuilder head = new StringBuilder(String.format("%-20s %5s %12s %-11s %9s %9s %11s", "subject", "size",
                    "rate", "status", pct + " us", "p99.9 us", "capacity"));
            for (int us : c.ladderUs) {
                if (us * 1000L != c.boundNs) { // the main bound is the "rate" column already
                    head.append(String.format(" %9s", "@" + us + "us"));
                }
            }
            out.println(head);
            out.println("-".repeat(head.length()));
            for (SweepResult s : r.results()) {
                PointResult p = Fmt.atHighest(s);
                StringBuilder line = new StringBuilder(String.format("%-20s %4dB %12s %-11s %9s %9s %11s", s.subject(),
                        s.messageSize(), Fmt.rateAtBound(s), s.status(),
                        p == null ? "-" : Fmt.us(p.valueAtPercentileNs()), p == null ? "-" : Fmt.us(p.latencyNs().p999()),
                        s.capacity() == null ? "-" : Fmt.rate(s.capacity())));
                for (Map.Entry<String, Double> e : s.highestRateByBoundUs().entrySet()) {
                    if (Long.parseLong(e.getKey()) * 1000L != c.boundNs) {
                        line.append(String.format(" %9s", e.getValue() == null ? "-" : Fmt.rate(e.getValue())));
                    }
                }
                out.println(line);
            }
            out.println();
            for (BenchResult.Ratios q : r.ratios()) {
                out.printf("Ratios at %s <= %s us, %d B: %s / %s = %s", pct, Fmt.pct(q.boundUs()), q.messageSize(),
                        q.plain(), q.baseline(), Fmt.ratio(q.libraryPlainOverRaw()));
                q.encryptedOverPlain().forEach((k, v) -> out.printf(", %s / %s = %s", k, q.plain(), Fmt.ratio(v)));
                out.println();
            }
            for (BenchResult.Ratios q : r.ratios()) {
                if (q.boundUs() * 1000 == c.boundNs) {
                    out.printf("Capacity ratios (no latency bound), %d B: plain / raw = %s", q.messageSize(),
                            Fmt.ratio(q.capacityPlainOverRaw()));
                    q.capacityEncryptedOverPlain().forEach((k, v) -> out.printf(", %s / plain = %s", k, Fmt.ratio(v)));
                    out.println();
                }
            }
            out.println();
            out.printf("Messages over %s, by cause (points whose rate was kept):%n", bound);
            for (SweepResult s : r.results()) {
                out.printf("  %-20s %4dB  %s%n", s.subject(), s.messageSize(), Fmt.causes(s, c, 3));
            }
        }
        if (!r.jdkComparison().isEmpty()) {
            JdkComparison.Entry first = r.jdkComparison().get(0);
            out.printf("%nJDK comparison at %s msg/s, %d B, %.0f s per run (worst run by p99.99; samples beyond each"
                    + " percentile in brackets), us%n", Fmt.rate(first.rate()), first.messageSize(), first.seconds());
            out.printf("  %-20s %-32s %10s %16s %16s %16s%n", "subject", "JVM", "p50", "p99", "p99.9", "p99.99");
            for (JdkComparison.Entry e : r.jdkComparison()) {
                var l = e.latencyNs();
                var n = e.samplesBeyond();
                out.printf("  %-20s %-32s %10s %16s %16s %16s%s%n", e.subject(), e.jvmVersion(), Fmt.us(l.p50()),
                        Fmt.us(l.p99()) + " [" + n.get("p99") + "]", Fmt.us(l.p999()) + " [" + n.get("p99.9") + "]",
                        Fmt.us(l.p9999()) + " [" + n.get("p99.99") + "]", e.rateKept() ? "" : "  RATE NOT KEPT");
            }
        }
        if (r.jlbhCrossCheck() != null) {
            var j = r.jlbhCrossCheck();
            out.printf("%nJLBH cross-check: %s, %d B @ %s msg/s (worst run, us)%n", j.subject(), j.messageSize(),
                    Fmt.rate(j.rate()));
            out.printf("  %-8s %8s %8s %8s %8s %8s%n", "", "p50", "p90", "p99", "p99.9", "max");
            if (j.jlbhWorstNs() != null) {
                var p = j.jlbhWorstNs();
                out.printf("  %-8s %8s %8s %8s %8s %8s%n", "JLBH", Fmt.us(p.p50()), Fmt.us(p.p90()), Fmt.us(p.p99()),
                        Fmt.us(p.p999()), Fmt.us(p.max()));
            }
            var h = j.harness().latencyNs();
            out.printf("  %-8s %8s %8s %8s %8s %8s%n", "qe bench", Fmt.us(h.p50()), Fmt.us(h.p90()), Fmt.us(h.p99()),
                    Fmt.us(h.p999()), Fmt.us(h.max()));
            var sweep = Fmt.sweepPointAt(r, j);
            if (sweep != null) {
                var s = sweep.latencyNs();
                out.printf("  %-8s %8s %8s %8s %8s %8s  (the sweep's point: attribution on, shorter runs)%n", "sweep",
                        Fmt.us(s.p50()), Fmt.us(s.p90()), Fmt.us(s.p99()), Fmt.us(s.p999()), Fmt.us(s.max()));
            }
            out.println("  " + Fmt.verdictLine(j));
        }
        if (!r.notes().isEmpty()) {
            out.println();
            r.notes().forEach(n -> out.println("note: " + n));
        }
    }
}
