package io.queueenterprise.bench.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queueenterprise.bench.calibrate.Calibration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The bench module's command line as a user meets it: bad values, and calibrate's one JSON document. */
@org.junit.jupiter.api.Tag("process")
class BenchToolTest {

    /**
     * Every bad value: exit code 2, a first line naming the option, the usage, and no work done
     * (the output folder, the last thing checked, is never created).
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "bench --min-rate=-5 | --min-rate",
            "bench --min-rate=0 | --min-rate",
            "bench --max-rate=-1000 | --max-rate",
            "bench --min-rate=2000 --max-rate=1000 | --min-rate",
            "bench --percentile 150 | --percentile",
            "bench --bound abc | --bound",
            "bench --bound 0us | --bound",
            "bench --subjects nosuch | --subjects",
            "bench --sizes=-1 | --sizes",
            "bench --sizes=4 | --sizes",
            "bench --runs 0 | --runs",
            "bench --duration 0 | --duration",
            "bench --resolution 0 | --resolution",
            "bench --profile fast | --profile",
            "bench --jvm /nonexistent/java | --jvm",
            "bench --jlbh-subject nosuch | --jlbh-subject",
            "bench --queue-dir /nonexistent-dir | --queue-dir",
            "calibrate --size 4 | --size",
            "calibrate --bound abc | --bound",
            "calibrate --percentile 100 | --percentile",
            "calibrate --time-limit 0 | --time-limit",
            "ratios --sizes 0 | --sizes",
            "ratios --slice 10 | --slice",
            "ratios --rounds 1 | --rounds",
            "ratios --warmup-rounds -1 | --warmup-rounds",
            "ratios --only nosuch | --only",
            "ratios --replicated --send-batching-us -1 | --send-batching-us",
            "ratios --replicated --send-batching-us 1000001 | --send-batching-us",
            "ratios --send-batching-us 20 | --send-batching-us",
            "ratios --replicated --send-batching-us fast | --send-batching-us",
            "follower-cost --sizes 0 | --sizes",
            "follower-cost --sizes 60001 | --sizes",
            "follower-cost --sizes abc | --sizes",
            "follower-cost --excerpts 999 | --excerpts",
            "follower-cost --rounds 2 | --rounds",
            "follower-cost --warmup-rounds -1 | --warmup-rounds",
            "follower-cost --idle FOO | --idle",
    })
    void aBadValueIsOneLineNamingTheOptionUsageAndExitCode2(String args, String option, @TempDir Path tmp) {
        Path out = tmp.resolve("out");
        List<String> argv = new ArrayList<>(List.of(args.trim().split(" ")));
        if (argv.get(0).equals("bench")) {
            argv.add("--out");
            argv.add(out.toString());
        }
        StringWriter err = new StringWriter();
        CommandLine cmd = new CommandLine(new BenchTool());
        cmd.setErr(new PrintWriter(err, true));
        int rc = cmd.execute(argv.toArray(new String[0]));
        String text = err.toString();
        assertEquals(2, rc, text);
        String first = text.lines().findFirst().orElse("");
        assertTrue(first.contains(option), "first line names " + option + ": " + first);
        assertFalse(first.contains("Exception"), "no stack trace: " + first);
        assertTrue(text.contains("Usage:"), "usage follows");
        assertFalse(Files.exists(out), "no work started (the output folder was not created)");
    }

    @Test
    void anOutputFolderThatCannotBeCreatedIsABadValue(@TempDir Path tmp) throws Exception {
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        StringWriter err = new StringWriter();
        CommandLine cmd = new CommandLine(new BenchTool());
        cmd.setErr(new PrintWriter(err, true));
        int rc = cmd.execute("bench", "--out", file.resolve("sub").toString());
        assertEquals(2, rc, err.toString());
        assertTrue(err.toString().lines().findFirst().orElse("").startsWith("--out: "), err.toString());
    }

    /**
     * {@code qe calibrate} as the operator runs it (a process of its own): stdout is one JSON
     * document of at most 4 KiB with the documented fields; progress went to stderr; --output wrote the same
     * document to a file.
     */
    @Test
    void calibratePrintsOneCompactJsonDocumentOnStdout(@TempDir Path tmp) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        String argsFile = System.getProperty("qe.jvm.args.file");
        assertNotNull(argsFile, "the build passes bin/jvm.args to tests");
        cmd.add("@" + argsFile);
        cmd.add("-Dqe.jvm.args.file=" + argsFile);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), BenchTool.class.getName(), "calibrate",
                "--size", "64", "--min-rate", "20000", "--max-rate", "20000", "--duration", "0.05", "--runs", "1",
                "--warmup", "0.05", "--time-limit", "120", "--queue-dir", tmp.toString(),
                "--output", tmp.resolve("termination-log").toString()));
        Process p = new ProcessBuilder(cmd).redirectError(tmp.resolve("stderr.txt").toFile()).start();
        byte[] stdout = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), "calibrate finished");
        String err = Files.readString(tmp.resolve("stderr.txt"));
        assertEquals(0, p.exitValue(), err);
        String json = new String(stdout, StandardCharsets.UTF_8).trim();
        assertFalse(json.contains("\n"), "one line: " + json);
        assertTrue(stdout.length <= Calibration.MAX_BYTES, stdout.length + " bytes");
        JsonNode root = new ObjectMapper().readTree(json);
        assertEquals(Calibration.SCHEMA, root.get("schema").asText());
        for (String field : List.of("time", "commit", "dirty", "cores", "jvm", "messageSize", "percentile", "boundUs",
                "noise", "subjects", "ratios", "verdict", "heldBoundUs", "ratiosAtHeldBound", "elapsedSeconds")) {
            assertTrue(root.has(field), "field " + field);
        }
        assertEquals(List.of("plain", "ctr", "ctr-poly1305"), iterable(root.get("subjects")));
        for (JsonNode s : root.get("subjects")) {
            for (String field : List.of("status", "rate", "p50Us", "p99Us", "capacity", "smallestBoundUs")) {
                assertTrue(s.has(field), "subject field " + field);
            }
        }
        assertTrue(List.of("ok", "unreachable", "time-limit").contains(root.get("verdict").asText()));
        assertTrue(root.get("cores").get("count").asInt() >= 1);
        assertTrue(err.contains("[qe bench]"), "progress on stderr");
        // --output: the same document in a file (a pod's terminationMessagePath, where the operator reads it)
        assertEquals(json, Files.readString(tmp.resolve("termination-log"), StandardCharsets.UTF_8));
    }

    private static List<String> iterable(JsonNode object) {
        List<String> names = new ArrayList<>();
        object.fieldNames().forEachRemaining(names::add);
        return names;
    }

    /** The interleaved ratios at their smallest: every subject measured, ratios and the targets' verdicts printed. */
    @Test
    void ratiosPrintsEverySubjectAndTheTargetsVerdicts() {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        java.io.PrintStream stdout = System.out;
        int rc;
        try {
            System.setOut(new java.io.PrintStream(bytes, true, StandardCharsets.UTF_8));
            rc = new CommandLine(new BenchTool()).execute("ratios", "--sizes", "40", "--slice", "1000", "--rounds", "3",
                    "--warmup-rounds", "1");
        } finally {
            System.setOut(stdout);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, rc, out);
        for (String subject : io.queueenterprise.bench.ratio.PathRatios.SUBJECTS) {
            assertTrue(out.lines().anyMatch(l -> l.startsWith(subject + " ")), subject + " measured:\n" + out);
        }
        assertTrue(out.contains("Target library-ctr / plain >= 0.75 at 40 B: median"), out);
        assertTrue(out.contains("Target library-ctr-poly1305 / plain >= 0.60 at 40 B: median"), out);
    }
}
