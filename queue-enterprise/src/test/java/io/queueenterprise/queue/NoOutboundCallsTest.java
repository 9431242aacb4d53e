package io.queueenterprise.queue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The product makes no outbound network calls. Watched where no Java code can hide it: a child JVM
 * runs the library under {@code strace}, which records every connect and send system call with a
 * network address (DNS lookups included), with Chronicle's analytics NOT switched off on its command
 * line. A control run that does connect to a loopback port shows the watch sees connections.
 *
 * <p>Needs {@code strace} (Debian package {@code strace}); ptrace of a child is allowed for root.
 */
@org.junit.jupiter.api.Tag("process")
class NoOutboundCallsTest {
    /** A connect, sendto or sendmsg system call to an IPv4 or IPv6 address. */
    private static final Pattern NETWORK_CALL = Pattern.compile("(connect|sendto|sendmsg|sendmmsg)\\(.*sa_family=AF_INET6?\\b");

    @TempDir
    Path dir;

    @Test
    void aQueueOpenedWrittenAndReadMakesNoNetworkCallEvenWithAnalyticsNotSwitchedOff() throws Exception {
        List<String> calls = networkCalls(traceProbe(dir.resolve("run")));
        assertEquals(List.of(), calls, "network calls made by a JVM using the library");
    }

    @Test
    void controlTheWatchSeesAConnection() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            List<String> calls = networkCalls(traceProbe(dir.resolve("control"), "--connect", Integer.toString(server.getLocalPort())));
            assertTrue(calls.stream().anyMatch(c -> c.contains("connect(") && c.contains("htons(" + server.getLocalPort() + ")")),
                    "the probe's own connection to port " + server.getLocalPort() + " was seen: " + calls);
        }
    }

    @Test
    void theAnalyticsClientIsNotOnTheClasspath() {
        assertThrows(ClassNotFoundException.class,
                () -> Class.forName("net.openhft.chronicle.analytics.Analytics"));
        assertFalse(Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .anyMatch(entry -> entry.contains("chronicle-analytics")), System.getProperty("java.class.path"));
    }

    private static List<String> networkCalls(Path trace) throws IOException {
        return Files.readAllLines(trace).stream().filter(line -> NETWORK_CALL.matcher(line).find()).toList();
    }

    /** Installs strace through the project's own script when the machine lacks it (idempotent). */
    private static void ensureStrace() throws IOException, InterruptedException {
        Path script = Path.of(System.getProperty("qe.jvm.args.file")).getParent().resolveSibling("scripts")
                .resolve("install-test-packages.sh");
        Process install = new ProcessBuilder("bash", script.toString(), "strace").inheritIO().start();
        assertTrue(install.waitFor(600, TimeUnit.SECONDS) && install.exitValue() == 0,
                "strace is needed to watch for network calls, and " + script + " could not install it");
    }

    /** Runs {@link OutboundProbe} under strace; returns the trace file. */
    private static Path traceProbe(Path work, String... probeArgs) throws IOException, InterruptedException {
        ensureStrace();
        Files.createDirectories(work);
        Path trace = work.resolve("strace.txt");
        List<String> command = new ArrayList<>(List.of("strace", "-f", "-qq", "--seccomp-bpf",
                "-e", "trace=connect,sendto,sendmsg,sendmmsg", "-o", trace.toString(),
                Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        for (String line : Files.readAllLines(Path.of(System.getProperty("qe.jvm.args.file")))) {
            // The module flags Chronicle needs, but not the analytics switch: the library must hold on its own.
            if (!line.isBlank() && !line.contains("chronicle.analytics") && !line.contains("chronicle.announcer")) {
                command.add(line.trim());
            }
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), OutboundProbe.class.getName(), work.toString()));
        command.addAll(List.of(probeArgs));
        Process strace;
        try {
            strace = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(work.resolve("out.txt").toFile()).start();
        } catch (IOException e) {
            throw new AssertionError("strace is needed to watch for network calls (Debian: apt-get install strace)", e);
        }
        try {
            assertTrue(strace.waitFor(180, TimeUnit.SECONDS), "probe finished");
            String output = Files.readString(work.resolve("out.txt"));
            assertEquals(0, strace.exitValue(), output);
            assertTrue(output.contains("probe: done"), output);
            return trace;
        } finally {
            strace.descendants().forEach(ProcessHandle::destroyForcibly);
            strace.destroyForcibly();
            strace.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
