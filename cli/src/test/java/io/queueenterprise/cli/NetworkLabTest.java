package io.queueenterprise.cli;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lab itself: each fault does what it says to real UDP between two namespaces (a probe in one, an echo server
 * in the other), healing restores a clean link, and closing leaves no namespace and no process behind.
 */
@org.junit.jupiter.api.Tag("process")
@org.junit.jupiter.api.Tag("netns")
class NetworkLabTest {
    private static final int PORT = 9000;
    private static final int COUNT = 200;

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void everyFaultActsOnRealTrafficAndNothingIsLeftBehind() throws Exception {
        Assumptions.assumeTrue(NetworkLab.unavailableReason().isEmpty(),
                () -> "skipped: " + NetworkLab.unavailableReason().orElse(""));
        Process echo;
        NetworkLab closedLab;
        try (NetworkLab lab = NetworkLab.create(2, 42)) {
            closedLab = lab;
            Path echoLog = tmp.resolve("echo.log");
            echo = lab.start(1, NetworkLab.javaCommand(UdpProbe.class.getName(), "echo", Integer.toString(PORT)), echoLog);
            awaitLine(echoLog, "READY");

            Map<String, Long> clean = probe(lab, "clean");
            assertEquals(COUNT, clean.get("received"), clean.toString());
            assertEquals(0, clean.get("duplicates"));

            lab.impair(1, 0.3, 0, 0, 0);
            Map<String, Long> lossy = probe(lab, "loss");
            assertTrue(lossy.get("received") > 0 && lossy.get("received") < COUNT, lossy.toString());

            lab.impair(1, 0, 0, 0, 0.5);
            Map<String, Long> duplicated = probe(lab, "duplicate");
            assertEquals(COUNT, duplicated.get("received"), duplicated.toString());
            assertTrue(duplicated.get("duplicates") > 0, duplicated.toString());

            lab.impair(1, 0, 0, 0.5, 0);
            Map<String, Long> reordered = probe(lab, "reorder");
            assertEquals(COUNT, reordered.get("received"), reordered.toString());
            assertTrue(reordered.get("reordered") > 0, reordered.toString());

            lab.impair(1, 0, 20, 0, 0);
            Map<String, Long> delayed = probe(lab, "delay");
            assertEquals(COUNT, delayed.get("received"), delayed.toString());
            // A lower bound only: the request and the echo each cross host 1's 20 ms; nothing can be faster.
            assertTrue(delayed.get("minRttMicros") >= 40_000, delayed.toString());

            lab.partition(1);
            assertEquals(0, probe(lab, "partition").get("received"));

            lab.heal();
            Map<String, Long> healed = probe(lab, "healed");
            assertEquals(COUNT, healed.get("received"), healed.toString());
            assertEquals(0, healed.get("duplicates"));
            assertTrue(lab.stats().contains("dropped="), lab.stats());
        }
        assertFalse(echo.isAlive(), "the lab stopped the echo server");
        assertEquals(List.of(), closedLab.leftOver(), "no namespace of the lab is left");
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aLabLeftByATestRunThatDiedIsRemovedByTheNextLab() throws Exception {
        Assumptions.assumeTrue(NetworkLab.unavailableReason().isEmpty(),
                () -> "skipped: " + NetworkLab.unavailableReason().orElse(""));
        // A run that died: its PID is gone, its namespace and a process in it are still there.
        Process dead = new ProcessBuilder("true").start();
        dead.waitFor();
        String stale = "qe-lab-" + dead.pid() + "-1-hub";
        run("ip", "netns", "add", stale);
        Process orphan = new ProcessBuilder("ip", "netns", "exec", stale, "sleep", "120").start();
        try {
            try (NetworkLab lab = NetworkLab.create(1, 7)) {
                assertTrue(orphan.waitFor(30, TimeUnit.SECONDS), "the dead run's process was stopped");
                assertFalse(lab.leftOver().contains(stale));
            }
            Process list = new ProcessBuilder("ip", "netns", "list").start();
            String names = new String(list.getInputStream().readAllBytes());
            list.waitFor();
            assertFalse(names.contains(stale), names);
        } finally {
            orphan.destroyForcibly();
            new ProcessBuilder("ip", "netns", "del", stale).start().waitFor(); // in case the sweep failed
        }
    }

    private static void run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).inheritIO().start();
        assertEquals(0, p.waitFor(), String.join(" ", command));
    }

    private Map<String, Long> probe(NetworkLab lab, String name) throws Exception {
        Path log = tmp.resolve("probe-" + name + ".log");
        Process p = lab.start(0, NetworkLab.javaCommand(UdpProbe.class.getName(), "probe", lab.address(1),
                Integer.toString(PORT), Integer.toString(COUNT)), log);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), name + ": the probe finished");
        String line = Files.readAllLines(log).stream().filter(l -> l.startsWith("received=")).findFirst()
                .orElseThrow(() -> new AssertionError(name + ": no result in " + log));
        Map<String, Long> values = new HashMap<>();
        for (String kv : line.split(" ")) {
            String[] p2 = kv.split("=");
            values.put(p2[0], Long.parseLong(p2[1]));
        }
        return values;
    }

    static void awaitLine(Path log, String text) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (Files.exists(log) && Files.readString(log).contains(text)) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no '" + text + "' in " + log + " within 60 s");
    }
}
