package io.queueenterprise.examples;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bin/qe} as a user runs it, after this build packaged the cli module: the product's commands
 * run from the cli module's classpath, bad options exit 2 before anything runs, the demo's closing
 * benchmark can be skipped.
 */
@org.junit.jupiter.api.Tag("process")
@org.junit.jupiter.api.Tag("slow")
class QeLauncherIT {
    private static final Path ROOT = Path.of(System.getProperty("qe.project.root"));

    @TempDir
    Path tmp;

    @BeforeAll
    static void theCliModuleWasJustBuilt() throws IOException {
        // bin/qe rebuilds when a source is newer than this stamp; this build packaged the module just now.
        Path stamp = ROOT.resolve("cli/target/lib/.qe-built");
        assertTrue(Files.isDirectory(stamp.getParent()), "cli module packaged by this build");
        Files.deleteIfExists(stamp);
        Files.createFile(stamp);
    }

    @Test
    void withoutArgumentsItDescribesTheCommandsThatExist() throws Exception {
        Run run = qe(Map.of());
        assertEquals(0, run.exitCode, run.output);
        assertTrue(run.output.contains("demo"), run.output);
        assertFalse(run.output.contains("building"), "no rebuild: " + run.output);
    }

    @Test
    void aBadDemoOptionExitsWith2BeforeAnything() throws Exception {
        Run run = qe(Map.of(), "demo", "--messages", "-5", "--dir", tmp.resolve("never").toString());
        assertEquals(2, run.exitCode, run.output);
        assertTrue(run.output.startsWith("--messages must be between 1 and"), run.output);
        assertFalse(run.output.contains("quick latency benchmark"), "no benchmark after a refused demo: " + run.output);
        assertFalse(Files.exists(tmp.resolve("never")));
    }

    @Test
    void theDemoRunsFromTheCliClasspathAndItsBenchmarkCanBeSkipped() throws Exception {
        // -XshowSettings:properties prints the JVM's class path before the demo runs.
        Run run = qe(Map.of("QE_NO_BENCH", "1", "QE_JAVA_OPTS", "-XshowSettings:properties"), "demo", "--messages", "500",
                "--replication-messages", "100");
        assertEquals(0, run.exitCode, run.output);
        assertTrue(run.output.contains("Demo OK"), run.output);
        assertFalse(run.output.contains("quick latency benchmark"), run.output);
        assertTrue(run.output.contains("cli/target/classes"), "the cli module's class path: " + run.output);
        assertTrue(run.output.contains("Replication OK"), run.output);
        // HdrHistogram is not on this list: the node's own contract (NodeControl.ackLatencySinceLastCall) uses it.
        for (String benchOnly : List.of("jmh", "xchart", "jctools", "disruptor", "bench/target")) {
            assertFalse(run.output.contains(benchOnly), benchOnly + " on the demo's class path");
        }
    }

    private record Run(int exitCode, String output) {
    }

    private Run qe(Map<String, String> environment, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(ROOT.resolve("bin/qe").toString());
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(tmp.toFile()).redirectErrorStream(true);
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().remove("QE_JAVA_OPTS");
        builder.environment().putAll(environment);
        Path log = tmp.resolve("qe-" + System.nanoTime() + ".log");
        builder.redirectOutput(log.toFile());
        Process process = builder.start();
        try {
            assertTrue(process.waitFor(120, TimeUnit.SECONDS), "bin/qe finished");
            return new Run(process.exitValue(), Files.readString(log));
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
