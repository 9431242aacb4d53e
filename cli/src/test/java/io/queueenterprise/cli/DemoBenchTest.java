package io.queueenterprise.cli;

import io.aeron.CncFileDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The demo's benchmark step ({@link DemoBench}) around stand-in benchmarks (bash): one that fails as the quick
 * benchmark did on a loaded machine (Aeron stack traces from a subject JVM, then "did not answer within 70 s") and
 * leaves an Aeron directory of a dead subject behind; one that succeeds; one that does not finish.
 */
@org.junit.jupiter.api.Tag("process")
class DemoBenchTest {
    private static final String PROGRESS = "[qe bench] peer-aeron-udp-rtt 40B: JIT warm-up";
    private static final String LOADED_MACHINE_STDERR = String.join("\n", PROGRESS,
            "io.aeron.exceptions.ConductorServiceTimeoutException: FATAL - service interval exceeded: timeout=10000000000ns",
            "\tat io.aeron.ClientConductor.checkServiceInterval(ClientConductor.java:1512)",
            "\tat io.aeron.ClientConductor.doWork(ClientConductor.java:230)",
            "picocli.CommandLine$ExecutionException: Error while calling command (io.queueenterprise.bench.cli.BenchCommand@5b6f7412):"
                    + " java.io.IOException: subject JVM aeron-udp did not answer within 70 s",
            "\tat picocli.CommandLine.executeUserObject(CommandLine.java:2035)",
            "Caused by: java.io.IOException: subject JVM aeron-udp did not answer within 70 s",
            "\tat io.queueenterprise.bench.harness.ChildJvm.expect(ChildJvm.java:79)",
            "\t... 8 more");

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aBenchmarkThatCannotMeasureIsOneLineExitZeroAndLeavesNothing() throws Exception {
        Path deadSubject = Path.of("/dev/shm/qe-bench-aeron-demo-bench-test-" + ProcessHandle.current().pid());
        Path liveSubject = Path.of("/dev/shm/qe-bench-aeron-demo-bench-test-live-" + ProcessHandle.current().pid());
        // a replicated subject's node and a remote-append subject's client, killed with their subject JVM
        Path deadNode = Path.of("/dev/shm/qe-aeron-demo-bench-test-" + ProcessHandle.current().pid());
        Path deadClient = Path.of(System.getProperty("java.io.tmpdir"), "qe-client-demo-bench-test-" + ProcessHandle.current().pid());
        Path deadCnc = cncNaming(deadPid());
        Path liveCnc = cncNaming(ProcessHandle.current().pid()); // a driver still running is not touched
        Files.writeString(tmp.resolve("stderr"), LOADED_MACHINE_STDERR + "\n");
        // what the quick benchmark did: results so far on stdout, a subject's Aeron directory, queue files, then failing
        String script = "echo 'quick profile: 2 subjects'; mkdir -p " + deadSubject + " " + liveSubject + " " + deadNode + " " + deadClient
                + "; cp " + deadCnc + " " + deadSubject.resolve("cnc.dat") + "; cp " + liveCnc + " " + liveSubject.resolve("cnc.dat")
                + "; cp " + deadCnc + " " + deadNode.resolve("cnc.dat") + "; cp " + deadCnc + " " + deadClient.resolve("cnc.dat")
                + "; touch \"$2/queue-file\"; cat " + tmp.resolve("stderr") + " >&2; exit 1";
        try {
            Run run = run(List.of("bash", "-c", script, "fake-bench"), Duration.ofMinutes(1));
            assertEquals(0, run.exitCode, run.out + run.err);
            assertEquals(List.of("bin/qe: the quick benchmark could not measure latency on this machine (subject JVM aeron-udp"
                    + " did not answer within 70 s); the demo's own checks passed. Run bin/qe bench --profile quick on a"
                    + " quieter machine for numbers."), run.out.lines().toList());
            assertEquals(PROGRESS + "\n", run.err, "its progress as it came; no stack trace");
            assertFalse(Files.exists(deadSubject), "the dead subject's Aeron directory was removed");
            assertFalse(Files.exists(deadNode), "the dead subject's replication node's Aeron directory was removed");
            assertFalse(Files.exists(deadClient), "the dead subject's remote client's Aeron directory was removed");
            assertTrue(Files.exists(liveSubject), "a running driver's directory is left alone");
            assertNoQueueDirectoryLeft();
        } finally {
            DemoFiles.deleteRecursively(deadSubject);
            DemoFiles.deleteRecursively(liveSubject);
            DemoFiles.deleteRecursively(deadNode);
            DemoFiles.deleteRecursively(deadClient);
        }
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aBenchmarkThatSucceedsPassesItsNotesThrough() throws Exception {
        Run run = run(List.of("bash", "-c", "test \"$1\" = --queue-dir && touch \"$2/queue-file\" && echo 'a note' >&2", "fake-bench"),
                Duration.ofMinutes(1));
        assertEquals(0, run.exitCode);
        assertEquals("", run.out);
        assertEquals("a note\n", run.err);
        assertNoQueueDirectoryLeft();
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aBenchmarkThatDoesNotFinishIsStoppedAndSaidSo() throws Exception {
        Path pidFile = tmp.resolve("pid");
        Run run = run(List.of("bash", "-c", "echo $$ > " + pidFile + "; sleep 100", "fake-bench"), Duration.ofSeconds(3));
        assertEquals(0, run.exitCode);
        assertTrue(run.out.startsWith("bin/qe: the quick benchmark could not measure latency on this machine (it did not"
                + " finish within 0 min and was stopped)"), run.out);
        long pid = Long.parseLong(Files.readString(pidFile).strip());
        assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "the benchmark was stopped");
    }

    @Test
    void theReasonIsTheLastTopLevelMessageWithoutClassNames() {
        assertEquals("subject JVM aeron-udp did not answer within 70 s", DemoBench.reason(LOADED_MACHINE_STDERR.lines().toList(), 1));
        assertEquals("TimeoutException", DemoBench.reason(List.of("java.util.concurrent.TimeoutException", "\tat x.y(Z.java:1)"), 1));
        assertEquals("no subject JVM could be started", DemoBench.reason(List.of("no subject JVM could be started"), 1));
        assertEquals("it exited with status 3", DemoBench.reason(List.of(), 3));
        assertEquals(List.of(PROGRESS), LOADED_MACHINE_STDERR.lines().filter(l -> !DemoBench.isTrace(l)).toList(),
                "everything but the progress line is an exception or its trace");
    }

    private record Run(int exitCode, String out, String err) {
    }

    private static Run run(List<String> command, Duration limit) throws InterruptedException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exitCode = DemoBench.run(command, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), limit);
        return new Run(exitCode, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** The stand-ins write "queue-file" into the directory given as --queue-dir: none of those may be left. */
    private static void assertNoQueueDirectoryLeft() throws IOException {
        try (var entries = Files.list(Path.of("/dev/shm"))) {
            assertEquals(List.of(), entries.filter(p -> p.getFileName().toString().startsWith("qe-demo-bench-"))
                    .filter(p -> Files.exists(p.resolve("queue-file"))).toList());
        }
    }

    /** A CnC file whose driver PID is {@code pid}: what the demo judges a left directory by. */
    private Path cncNaming(long pid) throws IOException {
        ByteBuffer cnc = ByteBuffer.allocate(CncFileDescriptor.PID_FIELD_OFFSET + Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        cnc.putLong(CncFileDescriptor.PID_FIELD_OFFSET, pid);
        return Files.write(tmp.resolve("cnc-" + pid), cnc.array());
    }

    private static long deadPid() throws IOException, InterruptedException {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        return gone.pid();
    }
}
