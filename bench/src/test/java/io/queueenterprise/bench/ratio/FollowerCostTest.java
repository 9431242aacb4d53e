package io.queueenterprise.bench.ratio;

import io.queueenterprise.bench.cli.BenchTool;
import io.queueenterprise.bench.harness.Directories;
import io.queueenterprise.replication.ReplicationNode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code follower-cost} at its smallest: what a run reports and that it leaves nothing behind (its queues and the two
 * nodes' Aeron directories, in /dev/shm), also when the JVM is stopped mid-run. No assertion on any figure's size.
 */
@Tag("process")
@Timeout(300)
class FollowerCostTest {
    private static final Pattern ROOT = Pattern.compile("leader and follower under (\\S+) \\(removed at the end\\)");

    @Test
    void aRunReportsEveryRoundAndLeavesNothingBehind() throws Exception {
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        FollowerCost.Result result = new FollowerCost(64, 1000, 3, 1)
                .run(new PrintStream(progress, true, StandardCharsets.UTF_8));
        String text = progress.toString(StandardCharsets.UTF_8);
        assertEquals(3, result.totalNs().length, text);
        for (int round = 0; round < 3; round++) {
            assertTrue(result.dutyNs()[round] > 0 && result.writerNs()[round] > 0, text);
            assertEquals(result.dutyNs()[round] + result.writerNs()[round], result.totalNs()[round], 1e-9);
        }
        assertTrue(text.contains("size 64, round 4 of 4: "), text);
        assertLeftNothing(root(text));
    }

    /**
     * SIGTERM (what Ctrl-C's SIGINT also does): the shutdown hook closes the nodes and removes the run's directory, and
     * the command says so in one line.
     */
    @Test
    void aRunStoppedMidwayLeavesNothingBehind(@TempDir Path tmp) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        String argsFile = System.getProperty("qe.jvm.args.file");
        assertNotNull(argsFile, "the build passes bin/jvm.args to tests");
        cmd.add("@" + argsFile);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), BenchTool.class.getName(), "follower-cost",
                "--sizes", "64", "--excerpts", "1000", "--rounds", "100000", "--warmup-rounds", "0"));
        Path stderr = tmp.resolve("stderr.txt");
        Process process = new ProcessBuilder(cmd).redirectOutput(tmp.resolve("stdout.txt").toFile())
                .redirectError(stderr.toFile()).start();
        Path root = null;
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            String text = "";
            while (!text.contains("round 2 of") && process.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(100);
                text = Files.readString(stderr);
            }
            assertTrue(text.contains("round 2 of"), "measuring: " + text);
            root = root(text);
            assertTrue(Files.isDirectory(root), "the run's directory while it runs: " + root);
            process.destroy(); // SIGTERM
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "stopped within 30 s");
            assertLeftNothing(root);
            String after = Files.readString(stderr);
            assertTrue(after.contains("follower-cost: stopped; " + root + " removed"), after);
            assertFalse(after.contains("Exception"), "one line, no stack trace: " + after);
        } finally {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
            if (root != null) { // what the old code left
                Directories.deleteRecursively(root);
                for (String node : List.of("replica-0", "replica-1")) {
                    Directories.deleteRecursively(ReplicationNode.aeronDirectoryOf(node, root.resolve(node)));
                }
            }
        }
    }

    private static Path root(String progress) {
        Matcher m = ROOT.matcher(progress);
        assertTrue(m.find(), "the run names its directory: " + progress);
        return Path.of(m.group(1));
    }

    private static void assertLeftNothing(Path root) {
        assertFalse(Files.exists(root), "the run's queues removed: " + root);
        for (String node : List.of("replica-0", "replica-1")) {
            Path aeron = ReplicationNode.aeronDirectoryOf(node, root.resolve(node));
            assertFalse(Files.exists(aeron), node + "'s Aeron directory removed: " + aeron);
        }
    }
}
