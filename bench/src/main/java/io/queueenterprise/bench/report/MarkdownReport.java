package io.queueenterprise.bench.report;

import io.queueenterprise.bench.harness.BenchResult;
import io.queueenterprise.bench.harness.CrossCheckVerdict;
import io.queueenterprise.bench.harness.PointResult;
import io.queueenterprise.bench.harness.SweepResult;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** The Markdown report (report.md next to the JSON and the charts). */
public final class MarkdownReport {
    private MarkdownReport() {
    }

    public static void write(BenchResult r, List<String> charts, Path file) throws IOException {
        Files.writeString(file, render(r, charts));
    }

    public static String render(BenchResult r, List<String> charts) {
        var c = r.configuration();
        String pct = "p" + Fmt.pct(c.percentile);
        String bound = Fmt.boundUs(c.boundNs) + " µs";
        StringBuilder md = new StringBuilder();
        md.append("# qe bench report\n\n");
        var prov = r.provenance();
        md.append("Generated ").append(r.generatedAt()).append(" in ").append(String.format("%.0f", r.elapsedSeconds()))
                .append(" s. Command: `").append(prov.command()).append("`\n\n");
        md.append("- Source: commit `").append(prov.gitCommit()).append('`')
                .append(prov.gitDirty() == null ? " (work tree state unknown)"
                        : prov.gitDirty() ? " **with uncommitted changes**" : " (clean work tree)").append('\n');
        md.append("- Machine: ").append(r.machine().cpus()).append(" CPUs, ").append(r.machine().cpuModel())
                .append(", ").append(r.machine().memTotalKb() / 1024 / 1024).append(" GiB, ").append(r.machine().os()).append('\n');
        md.append("- JVM: ").append(r.jvm().vendor()).append(' ').append(r.jvm().vm()).append(' ')
                .append(r.jvm().version()).append(", flags from `").append(r.jvm().jvmArgsFile()).append("`\n");
        if (r.subjectJvms() != null) {
            r.subjectJvms().forEach((java, jvm) -> md.append("- Subject JVM `").append(java).append("`: ")
                    .append(jvm.vendor()).append(' ').append(jvm.version()).append(", flags ")
                    .append(String.join(" ", jvm.inputArguments())).append('\n'));
        }
        if (r.noise() != null) {
            md.append("- Machine noise before the run (each pinned thread busy-spinning ").append(r.noise().seconds())
                    .append(" s on nanoTime): ").append(r.noise().inWords()).append("; load average ").append(r.noise().loadAvgStart()).append(" before, ").append(r.noise().loadAvgEnd())
                    .append(" after\n");
        }
        if (r.jlbhCrossCheck() != null && r.jlbhCrossCheck().verdict() != null
                && r.jlbhCrossCheck().verdict().status() == CrossCheckVerdict.Status.DISAGREE) {
            md.append("\n> **JLBH CROSS-CHECK: DISAGREE.** ").append(r.jlbhCrossCheck().verdict().reason())
                    .append(" (see [JLBH cross-check](#jlbh-cross-check))\n\n");
        }
        md.append("- Pinning: ").append(r.pinning().plan()).append("; observed ").append(r.pinning().threads()).append('\n');
        md.append(String.format("- Profile `%s`: %s <= %s, sizes %s, %d run(s) per point (worst counts), %.2f s recorded"
                        + " + %.2f s warm-up per run, %.1f s JIT warm-up per sweep, 1-2-5 rates %s..%s msg/s then binary search"
                        + " to %.0f%%, queue files under `%s`%n",
                c.profile, pct, bound, c.messageSizes, c.runs, c.durationSeconds, c.runWarmupSeconds, c.warmupSeconds,
                Fmt.rate(c.minRate), Fmt.rate(c.maxRate), c.resolution * 100, c.queueRoot));
        md.append("\n## Highest offered rate at ").append(pct).append(" <= ").append(bound).append("\n\n");
        md.append("| subject | role | size | highest rate | status | ").append(pct)
                .append(" µs | p99.9 µs | max µs | capacity |");
        int ladderColumns = 0;
        for (int us : c.ladderUs) {
            if (us * 1000L != c.boundNs) { // the main bound is the "highest rate" column already
                md.append(" @").append(us).append(" µs |");
                ladderColumns++;
            }
        }
        md.append('\n').append("|---|---|---|---:|---|---:|---:|---:|---:|");
        md.append("---:|".repeat(ladderColumns)).append('\n');
        for (SweepResult s : r.results()) {
            PointResult p = Fmt.atHighest(s);
            md.append(String.format("| %s | %s | %d B | %s | %s | %s | %s | %s | %s |", s.subject(), s.role().toLowerCase(),
                    s.messageSize(), Fmt.rateAtBound(s), s.status(),
                    p == null ? "-" : Fmt.us(p.valueAtPercentileNs()), p == null ? "-" : Fmt.us(p.latencyNs().p999()),
                    p == null ? "-" : Fmt.us(p.latencyNs().max()), Fmt.capacity(s.capacity())));
            for (Map.Entry<String, Double> e : s.highestRateByBoundUs().entrySet()) {
                if (Long.parseLong(e.getKey()) * 1000L != c.boundNs) {
                    md.append(' ').append(e.getValue() == null ? "-" : Fmt.rate(e.getValue())).append(" |");
                }
            }
            md.append('\n');
        }
        md.append("\n### Optimistic view: highest measured rate meeting each bound at all\n\n| subject | size |");
        for (int us : c.ladderUs) {
            md.append(" @").append(us).append(" µs |");
        }
        md.append("\n|---|---|").append("---:|".repeat(c.ladderUs.size())).append('\n');
        for (SweepResult s : r.results()) {
            md.append("| ").append(s.subject()).append(" | ").append(s.messageSize()).append(" B |");
            for (Map.Entry<String, Double> e : s.bestRateByBoundUs().entrySet()) {
                md.append(' ').append(e.getValue() == null ? "-" : Fmt.rate(e.getValue())).append(" |");
            }
            md.append('\n');
        }
        md.append("\nThe `@N µs` columns apply the same rule (every measured rate up to it meets the bound) to the"
                + " measured points at other bounds: coarse 1-2-5 resolution.\n");
        md.append("\nCapacity = the highest rate the consumer received at a point whose rate was kept (producer on"
                + " schedule, nothing lost, backlog bounded), at any latency. `≥` = every rate up to the sweep's ceiling"
                + " met the bound.\n");
        md.append("\n## Ratios at the latency bound (one run)\n\n| size | bound | library plain / raw Chronicle |"
                + " encrypted / plain |\n|---|---|---:|---|\n");
        for (BenchResult.Ratios q : r.ratios()) {
            StringBuilder enc = new StringBuilder();
            q.encryptedOverPlain().forEach((k, v) -> enc.append(k).append(": ").append(Fmt.ratio(v)).append("; "));
            md.append(String.format("| %d B | %s <= %s µs | %s | %s |%n", q.messageSize(), pct, Fmt.pct(q.boundUs()),
                    Fmt.ratio(q.libraryPlainOverRaw()), enc.length() == 0 ? "n/a" : enc.toString()));
        }
        md.append("\n## Capacity ratios (no latency bound: not comparable with ratios taken at a bound)\n\n"
                + "| size | capacity: plain / raw | capacity: encrypted / plain |\n|---|---:|---|\n");
        for (BenchResult.Ratios q : r.ratios()) {
            if (q.boundUs() * 1000 != c.boundNs) {
                continue; // capacity does not depend on the bound: one row per size
            }
            StringBuilder capEnc = new StringBuilder();
            q.capacityEncryptedOverPlain().forEach((k, v) -> capEnc.append(k).append(": ").append(Fmt.ratio(v)).append("; "));
            md.append(String.format("| %d B | %s | %s |%n", q.messageSize(), Fmt.ratio(q.capacityPlainOverRaw()),
                    capEnc.length() == 0 ? "n/a" : capEnc.toString()));
        }
        md.append(String.format("%n## Outlier attribution: messages over %s, by cause%n%n", bound));
        md.append("Points whose rate was kept. Each message over the bound gets the first of: a GC pause or safepoint"
                + " (JFR) in its window; its producer or consumer thread waiting for a CPU (schedstat) or losing its"
                + " core while idle (spin gap); else the code a JFR stack sample found the producer or consumer in.\n\n"
                + "| subject | size | over the bound | top causes |\n|---|---|---:|---|\n");
        for (SweepResult s : r.results()) {
            md.append(String.format("| %s | %d B | %s | %s |%n", s.subject(), s.messageSize(),
                    s.outliers() == null ? "-" : Long.toString(s.outliers().overBound()), Fmt.causes(s, c, 4)));
        }
        if (!r.jdkComparison().isEmpty()) {
            var first = r.jdkComparison().get(0);
            md.append(String.format("%n## JDK comparison: %s msg/s, %d B, %.0f s per run, worst of %d runs by p99.99%n%n",
                    Fmt.rate(first.rate()), first.messageSize(), first.seconds(), first.runs()));
            md.append("Samples at or beyond each percentile in brackets: a p99.99 resting on a handful of samples is"
                    + " a weak figure.\n\n| subject | JVM | samples | p50 µs | p99 µs | p99.9 µs | p99.99 µs | rate kept |\n"
                    + "|---|---|---:|---:|---:|---:|---:|---|\n");
            for (var e : r.jdkComparison()) {
                var l = e.latencyNs();
                var n = e.samplesBeyond();
                md.append(String.format("| %s | %s | %d | %s | %s [%d] | %s [%d] | %s [%d] | %s |%n", e.subject(),
                        e.jvmVersion(), e.samples(), Fmt.us(l.p50()), Fmt.us(l.p99()), n.get("p99"), Fmt.us(l.p999()),
                        n.get("p99.9"), Fmt.us(l.p9999()), n.get("p99.99"), e.rateKept() ? "yes" : "**no**"));
            }
        }
        md.append("\n## Separation\n\n");
        for (BenchResult.Separation s : r.separation()) {
            if (s.mainBoundReachedBy().isEmpty()) {
                md.append(String.format("- %d B: **no subject met %s <= %s at any rate.** Smallest ladder bound at which"
                                + " one does: %s µs; highest rates there: %s%n", s.messageSize(), pct, bound,
                        s.separationBoundUs() == null ? "none (of " + c.ladderUs + ")" : s.separationBoundUs(),
                        s.separationBoundUs() == null ? "-" : rates(s.highestRateAtSeparationBound())));
            } else {
                md.append(String.format("- %d B: %s <= %s met by %s%n", s.messageSize(), pct, bound, s.mainBoundReachedBy()));
            }
            if (s.bestSeparationBoundUs() != null) {
                md.append(String.format("- %d B, optimistic rule (the highest measured rate meeting the bound, whatever"
                                + " happened at lower rates): smallest ladder bound met by a subject: %d µs; best rates there: %s%n",
                        s.messageSize(), s.bestSeparationBoundUs(), rates(s.bestRateAtBestSeparationBound())));
            }
        }
        if (r.jlbhCrossCheck() != null) {
            var j = r.jlbhCrossCheck();
            md.append(String.format("%n## JLBH cross-check%n%n%s, %d B at %s msg/s, %d iterations per run,"
                            + " coordinated-omission correction on; %d runs of each, alternating, each after a quiesce,"
                            + " this harness warmed up first and without outlier attribution; worst run by p99 (µs):%n%n",
                    j.subject(), j.messageSize(), Fmt.rate(j.rate()), j.iterations(), j.jlbhRunsNs().size()));
            md.append("| harness | p50 | p90 | p99 | p99.9 | p99.99 | max |\n|---|---:|---:|---:|---:|---:|---:|\n");
            if (j.jlbhWorstNs() != null) {
                md.append(row("JLBH", j.jlbhWorstNs()));
            }
            md.append(row("qe bench", j.harness().latencyNs()));
            PointResult sweep = Fmt.sweepPointAt(r, j);
            if (sweep != null) {
                md.append(row("the sweep's point (attribution on, shorter runs; context, not judged)", sweep.latencyNs()));
            }
            md.append('\n').append(verdict(j)).append('\n');
            if (j.verdict() != null && !j.verdict().comparisons().isEmpty()) {
                md.append("\n| percentile | JLBH median µs | qe bench median µs | qe bench / JLBH | bound k |"
                        + " JLBH spread | qe bench spread | verdict |\n|---|---:|---:|---:|---:|---:|---:|---|\n");
                for (CrossCheckVerdict.Comparison q : j.verdict().comparisons()) {
                    md.append(String.format("| %s | %s | %s | %.2f | %.1f | %.1f | %.1f | %s |%n", q.percentile(),
                            Fmt.us(q.jlbhNs()), Fmt.us(q.harnessNs()), q.ratio(), q.bound(), q.jlbhSpread(),
                            q.harnessSpread(), q.agree() ? "agree" : "**DISAGREE**"));
                }
            }
            md.append(String.format("%nRule: each instrument's median run; the noise is each one's spread (max / min)"
                    + " over its own runs; they disagree when qe bench / JLBH lies outside [1/k, k], k = max(%.0f,"
                    + " both spreads), and differs by more than %d ns. A point where any run of either did not keep"
                    + " the rate is past capacity: not compared.%n", CrossCheckVerdict.RATIO_FLOOR,
                    CrossCheckVerdict.ABSOLUTE_FLOOR_NS));
        }
        md.append("\n## Charts\n\n");
        for (String f : charts) {
            md.append("![").append(f).append("](").append(f).append(")\n\n");
        }
        md.append("## Every point (worst run)\n\n| subject | size | offered | sent | received | kept | samples | p50 | p90 | p99 | p99.9 | p99.99 | max |\n");
        md.append("|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (SweepResult s : r.results()) {
            for (PointResult p : s.points()) {
                var l = p.latencyNs();
                md.append(String.format("| %s | %d | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s |%n", s.subject(),
                        s.messageSize(), Fmt.rate(p.offeredRate()), Fmt.rate(p.achievedRate()), Fmt.rate(p.receivedRate()),
                        p.rateKept() ? "yes" : "**no**",
                        p.samples(), Fmt.us(l.p50()), Fmt.us(l.p90()), Fmt.us(l.p99()), Fmt.us(l.p999()),
                        Fmt.us(l.p9999()), Fmt.us(l.max())));
            }
        }
        if (!r.notes().isEmpty()) {
            md.append("\n## Notes\n\n");
            r.notes().forEach(n -> md.append("- ").append(n).append('\n'));
        }
        return md.toString();
    }

    private static String row(String name, io.queueenterprise.bench.harness.Percentiles p) {
        return String.format("| %s | %s | %s | %s | %s | %s | %s |%n", name, Fmt.us(p.p50()), Fmt.us(p.p90()),
                Fmt.us(p.p99()), Fmt.us(p.p999()), Fmt.us(p.p9999()), Fmt.us(p.max()));
    }

    /** The verdict for Markdown: the status in bold, then the reason with both figures and the bound. */
    static String verdict(io.queueenterprise.bench.harness.JlbhCrossCheck.Result j) {
        CrossCheckVerdict v = j.verdict();
        if (v == null) {
            return "No verdict: recorded before the cross-check judged agreement.";
        }
        // the reason starts with the status in words ("agree within ...", "DISAGREE beyond ...", "not comparable ...")
        return "**Verdict:** " + (v.status() == CrossCheckVerdict.Status.DISAGREE ? "**" + v.reason() + "**" : v.reason());
    }

    private static String rates(Map<String, Double> m) {
        StringBuilder sb = new StringBuilder();
        m.forEach((k, v) -> sb.append(k).append(" ").append(Fmt.rate(v)).append("; "));
        return sb.toString();
    }
}
