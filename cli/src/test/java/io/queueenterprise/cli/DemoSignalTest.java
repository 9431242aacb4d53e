package io.queueenterprise.cli;

import io.queueenterprise.replication.ReplicationNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code qe demo} as a real child process stopped by a signal mid-way (a user's Ctrl-C, a {@code kill}): its node
 * processes are stopped, the temporary directory with the demo's key is gone, and neither the nodes' nor the remote
 * client's Aeron directories are left.
 */
@org.junit.jupiter.api.Tag("process")
@org.junit.jupiter.api.Tag("slow")
class DemoSignalTest {
    private static final long WAIT_SECONDS = 180;
    private static final Pattern PIDS = Pattern.compile("PIDs (\\d+), (\\d+), (\\d+)");

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void sigtermDuringTheRemoteClientPartStopsTheNodesAndLeavesNothing() throws Exception {
        assertSignalLeavesNothing("TERM", "The client is appending", 143);
    }

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void sigintDuringTheReplicationPartStopsTheNodesAndLeavesNothing() throws Exception {
        assertSignalLeavesNothing("INT", "Promoted replica-0 to leader at term 1", 130);
    }

    private void assertSignalLeavesNothing(String signal, String when, int exitCode) throws Exception {
        Path javaTmp = Files.createDirectories(tmp.resolve("java-tmp")); // the demo's temporary directory goes here
        List<String> command = new ArrayList<>(LocalCluster.qeCommand("demo", "--replication-only", "--replication-messages", "300",
                "--no-bench"));
        command.add(1, "-Djava.io.tmpdir=" + javaTmp);
        // A suite started in the background of a non-interactive shell (nohup ... &) hands its children SIGINT
        // ignored, and a JVM that starts with SIGINT ignored never installs its handler: the demo would run on. The
        // demo is started with the default disposition, as from a terminal, whatever launched the suite.
        command.addAll(0, List.of("env", "--default-signal=INT,TERM"));
        Process demo = new ProcessBuilder(command).redirectError(tmp.resolve("demo.err").toFile()).start();
        StringBuffer out = new StringBuffer();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(demo.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    out.append(line).append('\n');
                }
            } catch (IOException e) {
                // the demo is gone
            }
        }, "demo-output");
        reader.start();
        List<Long> nodes = new ArrayList<>();
        Path home = null;
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (!out.toString().contains(when) && demo.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            String before = out.toString();
            assertTrue(before.contains(when), "the demo got to '" + when + "':\n" + before + Files.readString(tmp.resolve("demo.err")));
            home = Path.of(before.lines().findFirst().orElseThrow().replaceAll(".* in ", ""));
            assertTrue(home.startsWith(javaTmp) && Files.isDirectory(home.resolve("keys")), home + ": the demo's temporary directory, key inside");
            Matcher pids = PIDS.matcher(before);
            assertTrue(pids.find(), before);
            do { // every node the demo started; the running ones are the last three
                for (int i = 1; i <= 3; i++) {
                    nodes.add(Long.parseLong(pids.group(i)));
                }
            } while (pids.find());

            new ProcessBuilder("kill", "-" + signal, Long.toString(demo.pid())).inheritIO().start().waitFor();
            assertTrue(demo.waitFor(WAIT_SECONDS, TimeUnit.SECONDS), "the demo ended after SIG" + signal);
            reader.join(10_000);
            String err = Files.readString(tmp.resolve("demo.err"));
            assertEquals(exitCode, demo.exitValue(), out + err);
            assertFalse(err.contains("Exception"), "no stack trace: " + err);
            for (long pid : nodes) {
                assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "node process " + pid + " stopped");
            }
            assertFalse(Files.exists(home), "the temporary directory and the key in it are gone: " + home);
            try (Stream<Path> left = Files.list(javaTmp)) {
                assertEquals(List.of(), left.map(p -> p.getFileName().toString()).toList(),
                        "nothing left in the temporary area (remote clients' Aeron directories included)");
            }
            for (String part : List.of("replication", "remote-client")) {
                for (int i = 0; i < 3; i++) {
                    Path aeron = ReplicationNode.aeronDirectoryOf(LocalCluster.nodeId(i), home.resolve(part).resolve(LocalCluster.nodeId(i)).resolve("data"));
                    assertFalse(Files.exists(aeron), "no Aeron directory left: " + aeron);
                }
            }
        } finally { // the old behaviour leaves the nodes running: stop them here, by PID, and what they left
            demo.destroyForcibly();
            demo.waitFor(30, TimeUnit.SECONDS);
            for (long pid : nodes) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
            for (long pid : nodes) {
                ProcessHandle.of(pid).ifPresent(p -> p.onExit().join());
            }
            if (home != null) {
                for (String part : List.of("replication", "remote-client")) {
                    for (int i = 0; i < 3; i++) {
                        Path data = home.resolve(part).resolve(LocalCluster.nodeId(i)).resolve("data");
                        if (Files.isDirectory(data)) {
                            ReplicationNode.removeLeftAeronDirectory(LocalCluster.nodeId(i), data);
                        }
                    }
                }
            }
        }
    }
}
