package io.queueenterprise.cli;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueTailer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static io.queueenterprise.cli.QeRun.qe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code qe demo} as a user runs it: bad options, re-runs in one directory, keys. */
@org.junit.jupiter.api.Tag("integration")
@org.junit.jupiter.api.Tag("slow")
class DemoCommandTest {
    private static final int MESSAGES = 3_000;

    @TempDir
    Path tmp;



    @Test
    void everyBadValueGivesOneLineNamingTheOptionUsageAndExitCode2BeforeAnyWork() throws IOException {
        Path aFile = Files.writeString(tmp.resolve("a-file"), "not a directory");
        Path work = tmp.resolve("work");
        List<String[]> bad = List.of(
                new String[]{"demo", "--messages", "-5", "--dir", work.toString()},
                new String[]{"demo", "--messages", "0", "--dir", work.toString()},
                new String[]{"demo", "--messages", "10000001", "--dir", work.toString()},
                new String[]{"demo", "--messages", "abc", "--dir", work.toString()},
                new String[]{"demo", "--messages", "1e3", "--dir", work.toString()},
                new String[]{"demo", "--dir", aFile.toString()},
                new String[]{"demo", "--dir", aFile.resolve("below-a-file").toString()},
                new String[]{"demo", "--dir", work.toString(), "--keep"},
                new String[]{"demo", "--replication-messages", "0", "--dir", work.toString()},
                new String[]{"demo", "--no-replication", "--replication-only", "--dir", work.toString()},
                new String[]{"demo", "--no-such-option"});
        for (String[] args : bad) {
            QeRun run = qe(args);
            String what = String.join(" ", args);
            assertEquals(2, run.exitCode(), what);
            String firstLine = run.err().lines().findFirst().orElse("");
            String option = args[args.length - 1].startsWith("--") ? args[args.length - 1]
                    : args[1].equals("--dir") ? "--dir" : args[1];
            assertTrue(firstLine.contains(option), what + ": first line names " + option + ": " + firstLine);
            assertTrue(run.err().contains("Usage: qe demo"), what + ": usage follows");
            assertFalse(run.err().contains("Exception"), what + ": no stack trace: " + run.err());
            assertEquals("", run.out(), what + ": nothing ran");
        }
        assertFalse(Files.exists(work), "no option error left a directory behind");
    }

    @Test
    void rerunInOneDirectoryReusesTheKeyNeverOverwritesItAndTheFirstRunStaysReadable() throws IOException {
        Path home = tmp.resolve("demo");
        QeRun first = qe("demo", "--messages", Integer.toString(MESSAGES), "--dir", home.toString(), "--no-bench", "--no-replication");
        assertEquals(0, first.exitCode(), first.out() + first.err());
        assertTrue(first.out().contains("Demo OK"), first.out());
        Path keyFile = home.resolve("keys/1.key");
        byte[] key = Files.readAllBytes(keyFile);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(keyFile)));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(home.resolve("keys/active"))));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(home.resolve("keys"))));

        QeRun second = qe("demo", "--messages", Integer.toString(MESSAGES), "--dir", home.toString(), "--no-bench", "--no-replication");
        assertEquals(0, second.exitCode(), second.out() + second.err());
        assertTrue(second.out().contains("reused as found"), second.out());
        assertArrayEquals(key, Files.readAllBytes(keyFile), "the key was not overwritten");
        assertEquals(List.of("1.key", "active"), list(home.resolve("keys")));
        assertEquals(List.of("keys", "run-1", "run-2"), list(home));

        // The first run's encrypted queues still open with the key directory and read back in full.
        for (String mode : List.of("aes_128_ctr", "aes_128_ctr_poly1305")) {
            Path queueDir = home.resolve("run-1/measured").resolve(mode);
            assertEquals(MESSAGES, readAll(queueDir, home.resolve("keys"),
                    io.queueenterprise.crypto.CipherMode.valueOf(mode.toUpperCase(java.util.Locale.ROOT))), mode);
        }
    }

    @Test
    void aKeyDirectoryThatHoldsKeysIsUsedAsFoundAndNotTouched() throws IOException {
        Path home = tmp.resolve("demo");
        Path keys = Files.createDirectories(home.resolve("keys"));
        byte[] material = new byte[16];
        Arrays.fill(material, (byte) 7);
        Files.writeString(keys.resolve("7.key"), java.util.HexFormat.of().formatHex(material) + "\n"); // the key file format
        Files.writeString(keys.resolve("active"), "7\n");
        QeRun run = qe("demo", "--messages", "500", "--dir", home.toString(), "--no-bench", "--no-replication");
        assertEquals(0, run.exitCode(), run.out() + run.err());
        assertEquals(List.of("7.key", "active"), list(keys), "no key added");
        assertEquals(java.util.HexFormat.of().formatHex(material) + "\n", Files.readString(keys.resolve("7.key")));
        assertEquals(500, readAll(home.resolve("run-1/measured/aes_128_ctr_poly1305"), keys,
                io.queueenterprise.crypto.CipherMode.AES_128_CTR_POLY1305));
    }

    @Test
    void aBrokenKeyDirectoryIsOneLineAndExitCode1() throws IOException {
        Path home = tmp.resolve("demo");
        Files.writeString(Files.createDirectories(home.resolve("keys")).resolve("active"), "1\n");
        QeRun run = qe("demo", "--messages", "500", "--dir", home.toString(), "--no-bench", "--no-replication");
        assertEquals(1, run.exitCode(), run.out() + run.err());
        assertEquals(1, run.err().lines().count(), run.err());
        assertTrue(run.err().startsWith("qe demo: "), run.err());
        assertEquals(List.of("active"), list(home.resolve("keys")), "nothing written into a key directory that holds files");
    }

    @Test
    void theReplicationAndRemoteClientPartsSurviveCrashesAndFailoversAndSaySo() throws IOException {
        Path home = tmp.resolve("demo");
        QeRun run = qe("demo", "--replication-only", "--replication-messages", "150", "--dir", home.toString(), "--no-bench");
        assertEquals(0, run.exitCode(), run.out() + run.err());
        String out = run.out();
        for (String step : List.of("SIGKILL replica-1", "Restarted replica-1", "SIGKILL the leader, replica-0",
                "Restarted the old leader replica-0", "450 of the 450 acknowledged messages, in order; none lost",
                "none found (the followers never had the key)", "Replication OK",
                "SIGKILL the leader, replica-0.", "found the new leader itself",
                "acknowledged messages present exactly once, in the client's order, at the index its write returned: yes",
                "Remote client OK")) {
            assertTrue(out.contains(step), step + ":\n" + out);
        }
        List<String> digests = out.lines().filter(l -> l.contains(" excerpts  sha256 ")).map(l -> l.replaceAll(".*sha256 ", "")).toList();
        assertEquals(3, digests.size(), out);
        assertEquals(1, digests.stream().distinct().count(), "one digest for all three replicas:\n" + out);
        assertFalse(out.contains("Demo OK"), "--replication-only skips the local queues");
        assertTrue(out.startsWith("Queue Enterprise demo, replication part only: 150 messages"), out);
    }

    @Test
    void theTopLevelHelpNamesOnlyWhatIsBuilt() {
        QeRun run = qe();
        assertEquals(0, run.exitCode());
        assertTrue(run.out().contains("demo"), run.out());
        assertTrue(run.out().contains("node"), run.out());
        for (String notBuilt : List.of("operator", "Kubernetes")) {
            assertFalse(run.out().contains(notBuilt), "help mentions " + notBuilt + ":\n" + run.out());
        }
    }

    @Test
    void theCommandLinesClasspathHoldsNothingOfTheBenchmark() {
        String classpath = System.getProperty("java.class.path");
        // HdrHistogram is no longer on this list: the node's own contract (NodeControl.ackLatencySinceLastCall) uses it.
        for (String library : List.of("jmh-core", "xchart", "jctools", "disruptor", "jlbh", "queue-enterprise-bench")) {
            assertFalse(classpath.contains(library), library + " on the command line's classpath: " + classpath);
        }
    }

    /** The mode is named in code, as an application must for AES_128_CTR (a file never chooses it). */
    private static int readAll(Path queueDir, Path keys, io.queueenterprise.crypto.CipherMode mode) {
        int read = 0;
        byte[] expected = new byte[DemoMessages.SIZE];
        byte[] buffer = new byte[DemoMessages.SIZE];
        try (EnterpriseQueue queue = EnterpriseQueue.builder(queueDir).encrypted(keys).cipherMode(mode).readOnly(true).build();
             QueueTailer tailer = queue.createTailer()) {
            int n;
            while ((n = tailer.read(buffer)) >= 0) {
                DemoMessages.fill(expected, read);
                assertEquals(DemoMessages.SIZE, n);
                assertArrayEquals(expected, buffer, "message " + read);
                read++;
            }
        }
        return read;
    }

    private static List<String> list(Path dir) throws IOException {
        List<String> names = new ArrayList<>();
        try (Stream<Path> entries = Files.list(dir)) {
            entries.forEach(p -> names.add(p.getFileName().toString()));
        }
        names.sort(null);
        return names;
    }
}
