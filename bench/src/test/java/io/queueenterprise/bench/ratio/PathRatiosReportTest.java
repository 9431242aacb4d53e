package io.queueenterprise.bench.ratio;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The replicated suite's report ({@code qe ratios --replicated}) from made-up rounds: each ratio is the median (and
 * interquartile range) of per-round ratios, a round's subjects compared with each other, never a ratio of medians;
 * issue 18's four targets are each reported with their verdict.
 */
@org.junit.jupiter.api.Tag("unit")
class PathRatiosReportTest {

    @Test
    void reportsIssue18sRatiosAsMediansOfPerRoundRatios() {
        List<String> subjects = PathRatios.REPLICATED_SUBJECTS;
        assertEquals(List.of("library-ctr-poly1305", "replicated-async", "replicated-quorum", "remote-append-async",
                "remote-append-quorum"), subjects);
        double[][] ns = {
                {100, 100, 100, 100},   // library-ctr-poly1305
                {200, 100, 400, 200},   // replicated-async
                {250, 125, 500, 250},   // replicated-quorum: 0.8 of async in every round
                {400, 400, 400, 800},   // remote-append-async: 0.5, 0.25, 1.0, 0.25 of replicated-async by round
                {500, 500, 500, 1000},  // remote-append-quorum: 0.8 of remote async in every round
        };
        PathRatios.Result result = new PathRatios.Result(40, subjects, subjects, ns, true);

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PathRatios.print(result, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String report = bytes.toString(StandardCharsets.UTF_8);

        // per-round ratios 0.25, 0.25, 0.5, 1.0: median 0.375, quartiles 0.25 and 0.625 (the ratio of the medians, 200/400, would say 0.5)
        assertTrue(report.contains("Target remote-append-async / replicated-async >= 0.50 at 40 B: median 0.38 (IQR 0.25-0.63),"
                + " NOT met in this run"), report);
        assertTrue(report.contains("Target remote-append-quorum / remote-append-async >= 0.70 at 40 B: median 0.80 (IQR 0.80-0.80),"
                + " met in this run"), report);
        assertTrue(report.contains("Target replicated-quorum / replicated-async >= 0.70 at 40 B: median 0.80"), report);
        assertTrue(report.contains("Target replicated-async / library-ctr-poly1305 >= 0.50 at 40 B: median 0.50"), report);
        // the table: remote async's median 400 ns per message is 2,500,000 messages a second
        assertTrue(report.lines().anyMatch(l -> l.startsWith("remote-append-async") && l.contains(" 2500000 ")), report);
    }

    @Test
    void skipsATargetWhoseSubjectsDidNotRun() {
        List<String> subjects = List.of("replicated-async", "remote-append-async");
        double[][] ns = {{100, 100, 100}, {300, 300, 300}};
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        List<String> descriptions = List.of("local appends, a follower", "a remote client; the leader appended 3; 1 APPEND_BATCH frames carried 3");
        PathRatios.print(new PathRatios.Result(256, subjects, descriptions, ns, true),
                new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String report = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(report.contains("Target remote-append-async / replicated-async >= 0.50 at 256 B: median 0.33"), report);
        // what each subject is, and what its run did (the remote leader's intake), is in the report
        assertTrue(report.contains("  remote-append-async: a remote client; the leader appended 3; 1 APPEND_BATCH frames carried 3"), report);
        assertEquals(1, report.lines().filter(l -> l.startsWith("Target")).count(), report);
    }
}
