package io.queueenterprise.bench.report;

import com.fasterxml.jackson.databind.JsonNode;
import io.queueenterprise.bench.harness.BenchResult;
import io.queueenterprise.bench.harness.CrossCheckVerdict;
import io.queueenterprise.bench.harness.JlbhCrossCheck;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How the cross-check's verdict reaches a reader: the report, the console and summary.json. On a
 * stored result (docs/perf-data) whose cross-check is replaced by made-up runs: nothing measured.
 */
@org.junit.jupiter.api.Tag("unit")
@org.junit.jupiter.api.Timeout(60)
class CrossCheckReportTest {

    private static final Path STORED = Path.of("../docs/perf-data/2026-11-22-quick/summary.json");

    private static CrossCheckVerdict.Run run(long p50, long p99, boolean kept) {
        return new CrossCheckVerdict.Run(p50, p99, kept);
    }

    /** The stored result with its cross-check replaced by one carrying {@code verdict}. */
    private static BenchResult withVerdict(CrossCheckVerdict verdict) throws Exception {
        BenchResult r = JsonReport.read(STORED);
        JlbhCrossCheck.Result j = r.jlbhCrossCheck();
        JlbhCrossCheck.Result judged = new JlbhCrossCheck.Result(j.subject(), j.messageSize(), j.rate(),
                j.iterations(), j.jlbhRunsNs(), List.of(true, true, true), j.jlbhWorstNs(), j.harness(), verdict, null);
        return new BenchResult(r.schemaVersion(), r.tool(), r.generatedAt(), r.provenance(), r.elapsedSeconds(),
                r.machine(), r.jvm(), r.subjectJvms(), r.noise(), r.pinning(), r.configuration(), r.subjects(),
                r.results(), r.ratios(), r.separation(), r.jdkComparison(), judged, r.notes());
    }

    private static String console(BenchResult r) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ConsoleTable.print(r, new PrintStream(out, true, StandardCharsets.UTF_8));
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aDisagreementIsPrintedProminentlyAndKeptInTheSummary(@TempDir Path tmp) throws Exception {
        // the figures: JLBH p50 1.0 us, the harness row 1,105 us
        CrossCheckVerdict v = CrossCheckVerdict.judge(
                List.of(run(1_000, 5_200_000, true), run(1_100, 5_000_000, true), run(1_000, 4_900_000, true)),
                List.of(run(1_105_000, 41_600_000, true), run(1_000_000, 40_000_000, true),
                        run(1_200_000, 42_000_000, true)));
        BenchResult r = withVerdict(v);

        String md = MarkdownReport.render(r, List.of());
        int banner = md.indexOf("> **JLBH CROSS-CHECK: DISAGREE.**");
        assertTrue(banner > 0 && banner < md.indexOf("## Highest offered rate"), "a banner before the results:\n" + md);
        assertTrue(md.contains("**Verdict:** **DISAGREE beyond the machine's noise: p50: qe bench 1105 us vs JLBH 1.0 us"), md);
        assertTrue(md.contains("| p50 | 1.0 | 1105 | 1105.00 | 2.0 |"), "both figures and the bound:\n" + md);
        assertTrue(console(r).contains("*** JLBH CROSS-CHECK DISAGREES *** DISAGREE beyond the machine's noise: p50:"
                + " qe bench 1105 us vs JLBH 1.0 us"), console(r));

        Path summary = tmp.resolve("summary.json");
        JsonReport.writeSummary(r, summary);
        JsonNode verdict = JsonReport.mapper().readTree(summary.toFile()).get("jlbhCrossCheck").get("verdict");
        assertEquals("DISAGREE", verdict.get("status").asText());
        assertEquals(1_105_000, verdict.get("comparisons").get(0).get("harnessNs").asLong());
        assertEquals(2.0, verdict.get("comparisons").get(0).get("bound").asDouble());
        assertEquals(CrossCheckVerdict.Status.DISAGREE, JsonReport.read(summary).jlbhCrossCheck().verdict().status(),
                "--report-from reads the verdict back");
    }

    @Test
    void pastCapacityIsSaidAsSuchAndIsNoDisagreement() throws Exception {
        CrossCheckVerdict v = CrossCheckVerdict.judge(List.of(run(1_000, 5_000, true)),
                List.of(run(1_000_000, 40_000_000, false)));
        BenchResult r = withVerdict(v);
        String md = MarkdownReport.render(r, List.of());
        assertFalse(md.contains("DISAGREE"), md);
        assertTrue(md.contains("**Verdict:** not comparable (past capacity)"), md);
        assertTrue(console(r).contains("JLBH cross-check not comparable (past capacity)"), console(r));
    }

    @Test
    void aResultStoredBeforeVerdictsSaysItHasNone() throws Exception {
        BenchResult r = JsonReport.read(STORED);
        String md = MarkdownReport.render(r, List.of());
        assertTrue(md.contains("No verdict: recorded before the cross-check judged agreement."), md);
        assertFalse(md.contains("DISAGREE"), md);
        assertTrue(console(r).contains("JLBH cross-check: no verdict"), console(r));
    }

    @Test
    void anAgreementSaysSoWithTheBound() throws Exception {
        BenchResult r = withVerdict(CrossCheckVerdict.judge(List.of(run(1_000, 20_000, true)),
                List.of(run(1_100, 22_000, true))));
        assertTrue(MarkdownReport.render(r, List.of()).contains("**Verdict:** agree within the machine's noise"));
        assertTrue(console(r).contains("JLBH cross-check agrees: "), console(r));
    }
}
