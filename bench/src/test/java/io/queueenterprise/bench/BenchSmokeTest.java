package io.queueenterprise.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.queueenterprise.bench.harness.BenchConfig;
import io.queueenterprise.bench.harness.BenchResult;
import io.queueenterprise.bench.harness.BenchRunner;
import io.queueenterprise.bench.report.Charts;
import io.queueenterprise.bench.report.JsonReport;
import io.queueenterprise.bench.report.MarkdownReport;
import io.queueenterprise.bench.subject.SubjectRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs the whole harness briefly (one rate, tiny durations, every registered subject, both default
 * sizes) and checks the JSON's structure and that every subject produced samples. Deliberately no
 * assertion on any latency or rate value: timing is the machine's business, not the test's.
 */
@org.junit.jupiter.api.Tag("integration")
@org.junit.jupiter.api.Tag("slow")
class BenchSmokeTest {

    @Test
    void everySubjectProducesSamplesAndTheJsonHasItsDocumentedShape(@TempDir Path tmp) throws Exception {
        BenchConfig c = BenchConfig.quick();
        c.profile = "smoke";
        c.minRate = 20_000;
        c.maxRate = 20_000;            // one rate
        c.durationSeconds = 0.05;
        c.runWarmupSeconds = 0.01;
        c.warmupSeconds = 0.05;
        c.warmupRate = 20_000;
        c.runs = 1;
        c.noiseProbeSeconds = 0.05;
        c.jlbhRate = 10_000;           // JLBH cross-check on, tiny
        c.queueRoot = tmp.resolve("queues").toString();
        Files.createDirectories(Path.of(c.queueRoot));
        c.outDir = tmp.resolve("out");
        c.progress = false;
        Files.createDirectories(c.outDir);

        BenchResult result = new BenchRunner(c, System.err).run("smoke");
        Path json = c.outDir.resolve("bench.json");
        JsonReport.write(result, json);
        List<String> charts = Charts.write(result, c.outDir);
        MarkdownReport.write(result, charts, c.outDir.resolve("report.md"));

        JsonNode root = JsonReport.mapper().readTree(json.toFile());
        assertEquals(BenchResult.SCHEMA_VERSION, root.get("schemaVersion").asInt());
        for (String field : List.of("tool", "generatedAt", "provenance", "elapsedSeconds", "machine", "jvm",
                "subjectJvms", "noise", "pinning", "configuration", "subjects", "results", "ratios", "separation",
                "jdkComparison", "jlbhCrossCheck", "notes")) {
            assertTrue(root.has(field), "missing top-level field " + field);
        }
        for (String field : List.of("gitCommit", "gitDirty", "command", "javaCommandLine")) {
            assertTrue(root.get("provenance").has(field), "provenance." + field);
        }
        assertEquals("smoke", root.get("provenance").get("command").asText());
        assertEquals(1, root.get("subjectJvms").size(), "every subject ran in a forked JVM of the one java executable");
        for (String field : List.of("cpus", "cpuModel", "memTotalKb", "os")) {
            assertTrue(root.get("machine").has(field), "machine." + field);
        }
        for (String field : List.of("version", "vendor", "vm", "inputArguments")) {
            assertTrue(root.get("jvm").has(field), "jvm." + field);
        }
        for (String field : List.of("enabled", "cpus", "grantedList", "plan", "threads")) {
            assertTrue(root.get("pinning").has(field), "pinning." + field);
        }
        for (String field : List.of("boundNs", "percentile", "messageSizes", "subjects", "durationSeconds", "runs",
                "queueRoot")) {
            assertTrue(root.get("configuration").has(field), "configuration." + field);
        }

        List<String> all = SubjectRegistry.names();
        JsonNode results = root.get("results");
        assertEquals(all.size() * 2, results.size(), "one result per subject per size");
        Set<String> seen = new HashSet<>();
        for (JsonNode r : results) {
            String subject = r.get("subject").asText();
            seen.add(subject);
            for (String field : List.of("role", "messageSize", "jvm", "status", "highestRateAtBound", "highestRateByBoundUs",
                    "capacity", "outliers", "points")) {
                assertTrue(r.has(field), subject + " result." + field);
            }
            JsonNode points = r.get("points");
            assertFalse(points.isEmpty(), subject + " has points");
            for (JsonNode p : points) {
                for (String field : List.of("offeredRate", "phase", "achievedRate", "receivedRate", "rateKept", "samples",
                        "valueAtPercentileNs", "passes", "latencyNs", "runs")) {
                    assertTrue(p.has(field), subject + " point." + field);
                }
                for (String pct : List.of("p50", "p90", "p99", "p99.9", "p99.99", "max")) {
                    assertTrue(p.get("latencyNs").has(pct), subject + " latencyNs." + pct);
                }
                assertTrue(p.get("samples").asLong() > 0, subject + " produced samples at " + p.get("offeredRate"));
                for (JsonNode run : p.get("runs")) {
                    assertEquals(run.get("sent").asLong(), run.get("received").asLong(),
                            subject + ": every sent message was received");
                    assertTrue(run.has("outliers") && run.get("outliers").has("causes"), subject + ": attribution ran");
                }
            }
        }
        assertEquals(new HashSet<>(all), seen, "every registered subject ran");

        JsonNode jlbh = root.get("jlbhCrossCheck");
        assertFalse(jlbh.isNull());
        assertTrue(jlbh.get("jlbhRunsNs").size() > 0, "JLBH reported runs");
        assertTrue(jlbh.get("harness").get("samples").asLong() > 0);
        assertTrue(List.of("AGREE", "DISAGREE", "NOT_COMPARABLE").contains(jlbh.get("verdict").get("status").asText()),
                "the cross-check's verdict: " + jlbh.get("verdict"));
        assertEquals(jlbh.get("jlbhRunsNs").size(), jlbh.get("jlbhRunsRateKept").size());

        assertTrue(Files.size(c.outDir.resolve("report.md")) > 0);
        for (String chart : charts) {
            assertTrue(Files.size(c.outDir.resolve(chart)) > 0, chart);
        }
        try (var s = Files.list(Path.of(c.queueRoot))) {
            assertEquals(0, s.count(), "queue directories are deleted after each run");
        }
    }

    @Test
    void aConsumerInAnotherProcessReadsTheSameQueuePlainAndEncrypted(@TempDir Path tmp) throws Exception {
        BenchConfig c = BenchConfig.quick();
        c.profile = "smoke-consumer-process";
        c.subjects = new java.util.ArrayList<>(List.of("chronicle-raw", "library-ctr-poly1305", "peer-jctools-spsc"));
        c.messageSizes = new java.util.ArrayList<>(List.of(40));
        c.minRate = 20_000;
        c.maxRate = 20_000;
        c.durationSeconds = 0.05;
        c.runWarmupSeconds = 0.01;
        c.warmupSeconds = 0.05;
        c.warmupRate = 20_000;
        c.runs = 1;
        c.noiseProbeSeconds = 0.01;
        c.jlbhRate = 0;
        c.consumerProcess = true;
        c.queueRoot = tmp.resolve("queues").toString();
        Files.createDirectories(Path.of(c.queueRoot));
        c.progress = false;

        BenchResult result = new BenchRunner(c, System.err).run("smoke --consumer-process");
        JsonNode root = JsonReport.mapper().valueToTree(result);
        assertTrue(root.get("configuration").get("consumerProcess").asBoolean());
        assertTrue(root.get("pinning").get("threads").has("consumer-process (subject JVM)") || !result.pinning().enabled(),
                "the consumer process (started by the subject's JVM) reported its pinning: " + root.get("pinning"));
        assertEquals(3, root.get("results").size());
        for (JsonNode r : root.get("results")) {
            for (JsonNode p : r.get("points")) {
                for (JsonNode run : p.get("runs")) {
                    assertTrue(run.get("received").asLong() > 0, r.get("subject") + " produced samples");
                    assertEquals(run.get("sent").asLong(), run.get("received").asLong(),
                            r.get("subject") + ": every sent message was received");
                }
            }
        }
    }

    /** Two JVMs side by side: every subject on each, with the samples behind every percentile. */
    @Test
    void theJdkComparisonRunsEachSubjectOnEachJvm(@TempDir Path tmp) throws Exception {
        Path temurin25 = Path.of("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(temurin25), "no Temurin 25 on this machine");
        BenchConfig c = BenchConfig.quick();
        c.profile = "smoke-jdk";
        c.sweep = false;
        c.subjects = new java.util.ArrayList<>(List.of("library-plain"));
        c.jvms = new java.util.ArrayList<>(List.of(io.queueenterprise.bench.harness.SubjectWorkers.currentJava(),
                temurin25.toString()));
        c.jdkRate = 10_000;
        c.jdkSize = 64;
        c.jdkSeconds = 0.2;
        c.warmupSeconds = 0.05;
        c.runWarmupSeconds = 0.01;
        c.runs = 1;
        c.noiseProbeSeconds = 0.01;
        c.jlbhRate = 0;
        c.queueRoot = tmp.resolve("queues").toString();
        Files.createDirectories(Path.of(c.queueRoot));
        c.progress = false;

        BenchResult result = new BenchRunner(c, System.err).run("smoke --jvm a,b");
        JsonNode root = JsonReport.mapper().valueToTree(result);
        JsonNode jdks = root.get("jdkComparison");
        assertEquals(2, jdks.size(), "one entry per JVM");
        Set<String> versions = new HashSet<>();
        for (JsonNode e : jdks) {
            versions.add(e.get("jvmVersion").asText());
            assertEquals(e.get("samples").asLong(), 2_000, "0.2 s at 10 K msg/s");
            for (String pct : List.of("p50", "p99", "p99.9", "p99.99")) {
                assertTrue(e.get("latencyNs").has(pct), pct);
                assertEquals(Math.round(2_000 * (1 - Double.parseDouble(pct.substring(1)) / 100)),
                        e.get("samplesBeyond").get(pct).asLong(), "samples beyond " + pct);
            }
        }
        assertEquals(2, versions.size(), "the two entries ran on two different JVMs: " + versions);
        assertTrue(result.results().isEmpty(), "--no-sweep: no sweep");
    }
}
