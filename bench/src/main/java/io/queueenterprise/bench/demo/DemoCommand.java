package io.queueenterprise.bench.demo;

import io.queueenterprise.bench.cli.BenchCommand;
import io.queueenterprise.bench.harness.Directories;
import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueTailer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * The main job: writes and reads a plain and an encrypted queue on local disk, proves the encrypted
 * cycle files hold no plaintext by searching them for every message written, and prints throughput.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Write and read a plain and an encrypted queue on local disk, search the encrypted "
                + "cycle files for the plaintext, print throughput.")
public final class DemoCommand implements Callable<Integer> {
    private static final String MARKER = "QE-DEMO-ORDER#";
    private static final int MESSAGE_SIZE = 40;

    @Option(names = "--messages", description = "Messages per queue (default: ${DEFAULT-VALUE}).")
    int messages = 1_000_000;

    @Option(names = "--dir", description = "Working directory (default: a new temporary directory, deleted afterwards).")
    Path dir;

    @Option(names = "--keep", description = "Keep the queues and the demo key after the run.")
    boolean keep;

    @Option(names = "--no-bench", description = "Skip the quick latency benchmark (bin/qe bench --profile quick) at the end.")
    boolean noBench;

    private final PrintStream out = System.out;

    @Override
    public Integer call() throws IOException {
        boolean temporary = dir == null;
        Path work = temporary ? Files.createTempDirectory("qe-demo-") : Files.createDirectories(dir);
        try {
            Path keyDir = writeDemoKey(work.resolve("keys"));
            out.printf(Locale.ROOT, "Queue Enterprise demo: %,d messages of %d bytes per queue, in %s%n%n", messages, MESSAGE_SIZE, work);

            // Round 0 warms the JIT on every path; round 1 is measured, so the ratios compare like with like.
            List<Result> results = new ArrayList<>();
            for (int round = 0; round < 2; round++) {
                results.clear();
                Path roundDir = work.resolve(round == 0 ? "warm-up" : "measured");
                results.add(run("plain", EnterpriseQueue.builder(roundDir.resolve("plain"))));
                for (CipherMode mode : CipherMode.values()) {
                    results.add(run("encrypted " + mode, EnterpriseQueue.builder(roundDir.resolve(mode.name().toLowerCase(Locale.ROOT)))
                            .encrypted(keyDir).cipherMode(mode)));
                }
            }

            out.printf(Locale.ROOT, "%-34s %14s %14s %12s %s%n", "queue", "append msg/s", "read msg/s", "ns/msg r+w", "plaintext found in cycle files");
            boolean ok = true;
            for (Result r : results) {
                boolean expectPlaintext = r.name.equals("plain");
                boolean pass = expectPlaintext ? r.plaintextHits == messages : r.plaintextHits == 0;
                ok &= pass && r.readBack == messages;
                out.printf(Locale.ROOT, "%-34s %,14.0f %,14.0f %12.1f %,d of %,d %s%n", r.name, r.appendRate, r.readRate,
                        1e9 / r.appendRate + 1e9 / r.readRate, r.plaintextHits, messages,
                        pass ? (expectPlaintext ? "(expected: plain)" : "(none: encrypted)") : "<-- UNEXPECTED");
            }
            out.printf(Locale.ROOT, "%nEncrypted/plain throughput (append+read, same run): %s%n",
                    ratios(results));
            out.println(ok ? "\nDemo OK: every message read back; the encrypted cycle files hold none of the plaintext."
                    : "\nDemo FAILED: see the rows marked above.");
            if (!ok) {
                return 1;
            }
            if (noBench) {
                return 0;
            }
            out.println("\nNext: the quick latency profile (bin/qe bench --profile quick): open-loop load, p99 against offered rate.\n");
            out.flush();
            return BenchCommand.runQuickProfile();
        } finally {
            if (temporary && !keep) {
                Directories.deleteRecursively(work);
            }
        }
    }

    private String ratios(List<Result> results) {
        double plain = results.get(0).combinedRate();
        StringBuilder s = new StringBuilder();
        for (Result r : results.subList(1, results.size())) {
            s.append(String.format(Locale.ROOT, "%s %.2f  ", r.name.replace("encrypted ", ""), r.combinedRate() / plain));
        }
        return s.toString().trim();
    }

    private Result run(String name, EnterpriseQueue.Builder builder) throws IOException {
        byte[] message = new byte[MESSAGE_SIZE];
        byte[] marker = MARKER.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(marker, 0, message, 0, marker.length);
        byte[] received = new byte[MESSAGE_SIZE];
        Result result = new Result(name);
        try (EnterpriseQueue queue = builder.build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            long start = System.nanoTime();
            for (int i = 0; i < messages; i++) {
                writeSequence(message, marker.length, i);
                appender.write(message);
            }
            long appended = System.nanoTime();
            int read = 0;
            int n;
            while ((n = tailer.read(received)) >= 0) {
                if (n != MESSAGE_SIZE || readSequence(received, marker.length) != read) {
                    throw new IllegalStateException(name + ": message " + read + " did not read back");
                }
                read++;
            }
            long done = System.nanoTime();
            result.appendRate = messages * 1e9 / (appended - start);
            result.readRate = read * 1e9 / (done - appended);
            result.readBack = read;
            result.plaintextHits = countInCycleFiles(queue.path(), marker);
        }
        return result;
    }

    private static void writeSequence(byte[] message, int at, int sequence) {
        // Decimal digits: the searchable plaintext of each message is MARKER + its number.
        String digits = Integer.toString(sequence);
        for (int i = 0; i < 12; i++) {
            message[at + i] = i < digits.length() ? (byte) digits.charAt(i) : (byte) ' ';
        }
    }

    private static int readSequence(byte[] message, int at) {
        int value = 0;
        for (int i = at; i < at + 12 && message[i] != ' '; i++) {
            value = value * 10 + (message[i] - '0');
        }
        return value;
    }

    /** Occurrences of the marker in the queue's cycle files, read as raw bytes from disk. */
    static long countInCycleFiles(Path queueDir, byte[] marker) throws IOException {
        long hits = 0;
        try (Stream<Path> files = Files.list(queueDir)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".cq4")).toList()) {
                try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
                    long size = channel.size();
                    for (long pos = 0; pos < size; pos += Integer.MAX_VALUE / 2) {
                        long length = Math.min(size - pos, Integer.MAX_VALUE / 2 + marker.length);
                        MappedByteBuffer map = channel.map(FileChannel.MapMode.READ_ONLY, pos, length);
                        hits += count(map, marker, (int) Math.min(length, Integer.MAX_VALUE / 2));
                    }
                }
            }
        }
        return hits;
    }

    private static long count(MappedByteBuffer map, byte[] marker, int starts) {
        long hits = 0;
        int limit = map.limit() - marker.length;
        byte first = marker[0];
        for (int i = 0; i < starts && i <= limit; i++) {
            if (map.get(i) != first) {
                continue;
            }
            int j = 1;
            while (j < marker.length && map.get(i + j) == marker[j]) {
                j++;
            }
            if (j == marker.length) {
                hits++;
            }
        }
        return hits;
    }

    /** A random demo master key, written as a mounted Secret would be (owner-only file); never printed. */
    private static Path writeDemoKey(Path keyDir) throws IOException {
        Files.createDirectories(keyDir);
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        Path keyFile = keyDir.resolve("1.key");
        Files.write(keyFile, key);
        java.util.Arrays.fill(key, (byte) 0);
        try {
            Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException ignored) {
            // not a POSIX file system: nothing more to restrict
        }
        Files.writeString(keyDir.resolve("active"), "1\n");
        return keyDir;
    }

    private static final class Result {
        final String name;
        double appendRate;
        double readRate;
        long readBack;
        long plaintextHits;

        Result(String name) {
            this.name = name;
        }

        double combinedRate() {
            return 1e9 / (1e9 / appendRate + 1e9 / readRate);
        }
    }
}
