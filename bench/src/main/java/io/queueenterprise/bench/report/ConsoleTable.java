package io.queueenterprise.bench.report;

import io.queueenterprise.bench.harness.BenchResult;
import io.queueenterprise.bench.harness.PointResult;
import io.queueenterprise.bench.harness.SweepResult;

import java.io.PrintStream;
import java.util.Map;

/** The console summary. */
public final class ConsoleTable {
    private ConsoleTable() {
    }

    public static void print(BenchResult r, PrintStream out) {
        String pct = "p" + Fmt.pct(r.configuration().percentile);
        String bound = Fmt.us(r.configuration().boundNs) + " us";
        out.printf("%nHighest offered rate at %s <= %s (worst of %d runs per point, open loop)%n", pct, bound,
                r.configuration().runs);
        StringBuilder head = new StringBuilder(String.format("%-20s %5s %12s %-12s %9s %9s %10s", "subject", "size",
                "rate", "status", pct + " us", "p99.9 us", "max ach."));
        for (int us : r.configuration().ladderUs) {
            head.append(String.format(" %9s", "@" + us + "us"));
        }
        out.println(head);
        out.println("-".repeat(head.length()));
        for (SweepResult s : r.results()) {
            PointResult p = Fmt.atHighest(s);
            StringBuilder line = new StringBuilder(String.format("%-20s %4dB %12s %-12s %9s %9s %10s", s.subject(),
                    s.messageSize(), Fmt.rate(s.highestRateAtBound()), s.status(),
                    p == null ? "-" : Fmt.us(p.valueAtPercentileNs()), p == null ? "-" : Fmt.us(p.latencyNs().p999()), Fmt.rate(s.maxAchievedRate())));
            for (Map.Entry<String, Double> e : s.highestRateByBoundUs().entrySet()) {
                line.append(String.format(" %9s", e.getValue() == null ? "-" : Fmt.rate(e.getValue())));
            }
            out.println(line);
        }
        out.println();
        for (BenchResult.Ratios q : r.ratios()) {
            out.printf("Ratios at %s <= %s us, %d B: %s / %s = %s", pct, Fmt.pct(q.boundUs()), q.messageSize(),
                    q.plain(), q.baseline(), Fmt.ratio(q.libraryPlainOverRaw()));
            q.encryptedOverPlain().forEach((k, v) -> out.printf(", %s / %s = %s", k, q.plain(), Fmt.ratio(v)));
            out.printf("%n  capacity (max achieved rate, no bound): plain / raw = %s", Fmt.ratio(q.capacityPlainOverRaw()));
            q.capacityEncryptedOverPlain().forEach((k, v) -> out.printf(", %s / plain = %s", k, Fmt.ratio(v)));
            out.println();
        }
        if (r.jlbhCrossCheck() != null) {
            var j = r.jlbhCrossCheck();
            out.printf("%nJLBH cross-check: %s, %d B @ %s msg/s (worst run, us)%n", j.subject(), j.messageSize(),
                    Fmt.rate(j.rate()), "");
            out.printf("  %-8s %8s %8s %8s %8s %8s%n", "", "p50", "p90", "p99", "p99.9", "max");
            if (j.jlbhWorstNs() != null) {
                var p = j.jlbhWorstNs();
                out.printf("  %-8s %8s %8s %8s %8s %8s%n", "JLBH", Fmt.us(p.p50()), Fmt.us(p.p90()), Fmt.us(p.p99()),
                        Fmt.us(p.p999()), Fmt.us(p.max()));
            }
            var h = j.harness().latencyNs();
            out.printf("  %-8s %8s %8s %8s %8s %8s%n", "qe bench", Fmt.us(h.p50()), Fmt.us(h.p90()), Fmt.us(h.p99()),
                    Fmt.us(h.p999()), Fmt.us(h.max()));
        }
        if (!r.notes().isEmpty()) {
            out.println();
            r.notes().forEach(n -> out.println("note: " + n));
        }
    }
}
