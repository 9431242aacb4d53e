package io.queueenterprise.cli;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.QueueCryptoException;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueException;
import io.queueenterprise.queue.QueueTailer;
import io.queueenterprise.replication.ReplicationException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * The main job: writes and reads a plain and an encrypted queue in each cipher mode on local disk,
 * searches the cycle files for every message's plaintext (the plain queue is the search's control:
 * there it must find every message), and prints throughput; then replication ({@link ReplicationDemo}): a leader
 * and two followers as separate node processes, crashes and a failover, nothing acknowledged lost.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Write and read a plain queue and an encrypted queue in each cipher mode on local disk,"
                + " search every cycle file for each message's full plaintext and for a distinctive part of it,"
                + " print throughput.",
                "Then replication: a leader and two followers as separate `qe node` processes on loopback, encrypted"
                        + " quorum writes, a follower and then the leader killed with SIGKILL, a follower promoted, the old"
                        + " leader back as a follower; a digest per replica and every acknowledged message read back.",
                "Then a remote client: it appends a numbered stream over the network while the leader is killed and a"
                        + " follower promoted; a remote tailer reads it back from a replica, every acknowledged message once.",
                "Exit status: 0 demo OK, 1 a check failed, 2 bad option."})
public final class DemoCommand implements Callable<Integer> {
    static final int MAX_MESSAGES = 10_000_000;
    static final int MAX_REPLICATION_MESSAGES = 100_000;
    /** Enough for the JIT to compile every path before the measured round. */
    private static final int WARM_UP_MESSAGES = 200_000;

    @Option(names = "--messages", paramLabel = "N",
            description = "Messages per queue, 1.." + MAX_MESSAGES + " (default: ${DEFAULT-VALUE}).")
    int messages = 1_000_000;

    @Option(names = "--dir", paramLabel = "DIR",
            description = {"Keep everything in DIR: the key in DIR/keys (created once, never overwritten,"
                    + " reused by every later run) and each run's queues in a new DIR/run-<n>.",
                    "Default: a new temporary directory, deleted afterwards."})
    Path dir;

    @Option(names = "--keep", description = "Keep the temporary directory (queues and demo key) after the run.")
    boolean keep;

    @Option(names = "--replication-messages", paramLabel = "N",
            description = "Messages written in each of the replication part's three phases, and by the remote client, 1.."
                    + MAX_REPLICATION_MESSAGES + " (default: ${DEFAULT-VALUE}).")
    int replicationMessages = 1_000;

    @Option(names = "--no-replication", description = "Skip the replication and remote-client parts.")
    boolean noReplication;

    @Option(names = "--replication-only", description = "Only the replication part (skip the local queues).")
    boolean replicationOnly;

    @Option(names = "--no-bench", description = "bin/qe: skip the quick benchmark (bin/qe bench --profile quick)"
            + " that follows the demo; QE_NO_BENCH=1 does the same.")
    boolean noBench;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private PrintWriter out;

    @Override
    public Integer call() throws IOException, InterruptedException {
        validate();
        out = spec.commandLine().getOut();
        boolean temporary = dir == null;
        DemoCleanup cleanup = DemoCleanup.install(); // also on SIGINT/SIGTERM: nodes stopped, temporary files wiped
        Path home;
        try {
            home = temporary ? Files.createTempDirectory("qe-demo-") : dir;
        } catch (IOException e) {
            cleanup.close();
            throw e;
        }
        if (temporary && !keep) {
            cleanup.register(() -> DemoFiles.deleteWithSecrets(home, home.resolve("keys"))); // runs last: after the nodes stopped
        }
        try {
            DemoKeys keys = DemoKeys.ensure(home.resolve("keys"));
            Path work = temporary ? home : nextRunDirectory(home);
            if (replicationOnly) {
                out.printf(Locale.ROOT, "Queue Enterprise demo, replication part only: %,d messages of %d bytes in each of"
                        + " three phases, in %s%n", replicationMessages, DemoMessages.SIZE, work);
            } else {
                out.printf(Locale.ROOT, "Queue Enterprise demo: %,d messages of %d bytes per queue, in %s%n",
                        messages, DemoMessages.SIZE, work);
            }
            out.printf(Locale.ROOT, "Key directory %s: %s%n%n", keys.directory(),
                    keys.created() ? "a new random key (owner-only file, never printed)" : "reused as found (nothing overwritten)");
            boolean ok = replicationOnly || runAndReport(work, keys.directory()) == 0;
            if (!noReplication) {
                ok &= new ReplicationDemo(out, cleanup, keys.directory(), replicationMessages).run(work.resolve("replication"));
                ok &= new RemoteClientDemo(out, cleanup, keys.directory(), replicationMessages).run(work.resolve("remote-client"));
            }
            return ok ? 0 : 1;
        } catch (QueueException | QueueCryptoException | ReplicationException e) { // their own sentence says what is wrong
            return failed(cleanup, e.getMessage());
        } catch (IOException e) {
            return failed(cleanup, DemoFiles.describe(e));
        } finally {
            cleanup.close(); // the nodes stopped, then the temporary directory wiped and deleted
            if (temporary && keep) {
                out.println("Kept " + home);
            }
            out.flush();
        }
    }

    /** One line, unless a signal is stopping the demo: then the failure is the nodes going away under it. */
    private int failed(DemoCleanup cleanup, String why) {
        if (!cleanup.shuttingDown()) {
            spec.commandLine().getErr().println("qe demo: " + why);
        }
        return 1;
    }

    /** Every bad value is refused here, before any file is written. */
    private void validate() {
        if (replicationMessages < 1 || replicationMessages > MAX_REPLICATION_MESSAGES) {
            throw new CommandLine.ParameterException(spec.commandLine(), String.format(Locale.ROOT,
                    "--replication-messages must be between 1 and %,d, got %,d", MAX_REPLICATION_MESSAGES, replicationMessages));
        }
        if (noReplication && replicationOnly) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--no-replication and --replication-only exclude each other");
        }
        if (messages < 1 || messages > MAX_MESSAGES) {
            throw new CommandLine.ParameterException(spec.commandLine(), String.format(Locale.ROOT,
                    "--messages must be between 1 and %,d, got %,d", MAX_MESSAGES, messages));
        }
        if (dir != null) {
            if (keep) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--keep applies to the temporary directory; --dir " + dir + " is always kept");
            }
            if (Files.exists(dir) && !Files.isDirectory(dir)) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--dir " + dir + " exists and is not a directory");
            }
            try {
                Files.createDirectories(dir);
            } catch (IOException | SecurityException e) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--dir " + dir + " cannot be created: " + DemoFiles.describe(e));
            }
            if (!Files.isWritable(dir)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--dir " + dir + " is not writable");
            }
        }
    }

    /** {@code run-1}, {@code run-2}, ...: a re-run never touches an earlier run's queues. */
    private static Path nextRunDirectory(Path home) throws IOException {
        for (int n = 1; ; n++) {
            Path candidate = home.resolve("run-" + n);
            if (!Files.exists(candidate)) {
                return Files.createDirectory(candidate);
            }
        }
    }

    private int runAndReport(Path work, Path keyDir) throws IOException {
        List<Result> results = new ArrayList<>();
        // Round 0 warms the JIT on every path; round 1 is measured, so the ratios compare like with like.
        for (int round = 0; round < 2; round++) {
            results.clear();
            int count = round == 0 ? Math.min(messages, WARM_UP_MESSAGES) : messages;
            Path roundDir = work.resolve(round == 0 ? "warm-up" : "measured");
            results.add(run("plain", count, EnterpriseQueue.builder(roundDir.resolve("plain"))));
            for (CipherMode mode : CipherMode.values()) {
                results.add(run("encrypted " + mode, count, EnterpriseQueue.builder(roundDir.resolve(mode.name().toLowerCase(Locale.ROOT)))
                        .encrypted(keyDir).cipherMode(mode)));
            }
        }

        out.printf(Locale.ROOT, "%-34s %13s %13s %11s   %s%n", "queue", "append msg/s", "read msg/s", "ns/msg r+w",
                "found in the cycle files: full plaintext / distinctive part");
        boolean ok = true;
        for (Result r : results) {
            boolean plain = r.name.equals("plain");
            // The plain queue is the search's control: a search that cannot find plaintext proves nothing.
            boolean pass = r.readBack == messages && (plain
                    ? r.search.fullPlaintext() == messages && r.search.distinctivePart() == messages
                    : r.search.fullPlaintext() == 0 && r.search.distinctivePart() == 0);
            ok &= pass;
            out.printf(Locale.ROOT, "%-34s %,13.0f %,13.0f %11.1f   %,d / %,d of %,d %s%n", r.name, r.appendRate, r.readRate,
                    r.nanosPerMessage(), r.search.fullPlaintext(), r.search.distinctivePart(), messages,
                    pass ? (plain ? "(control: all found)" : "(none: encrypted)") : "<-- UNEXPECTED");
        }
        out.printf(Locale.ROOT, "%nEncrypted/plain throughput (append+read, same run): %s%n", ratios(results));
        out.println(ok ? "\nDemo OK: every message read back; the search found every message in the plain queue"
                + " and none, not even in part, in the encrypted ones."
                : "\nDemo FAILED: see the rows marked above.");
        return ok ? 0 : 1;
    }

    private static String ratios(List<Result> results) {
        double plain = results.get(0).nanosPerMessage();
        StringBuilder s = new StringBuilder();
        for (Result r : results.subList(1, results.size())) {
            s.append(String.format(Locale.ROOT, "%s %.2f  ", r.name.replace("encrypted ", ""), plain / r.nanosPerMessage()));
        }
        return s.toString().trim();
    }

    private static Result run(String name, int count, EnterpriseQueue.Builder builder) throws IOException {
        byte[] message = new byte[DemoMessages.SIZE];
        byte[] expected = new byte[DemoMessages.SIZE];
        byte[] received = new byte[DemoMessages.SIZE];
        Result result = new Result(name);
        try (EnterpriseQueue queue = builder.build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                DemoMessages.fill(message, i);
                appender.write(message);
            }
            long appended = System.nanoTime();
            int read = 0;
            int n;
            while ((n = tailer.read(received)) >= 0) {
                DemoMessages.fill(expected, read);
                if (n != DemoMessages.SIZE || !Arrays.equals(received, expected)) {
                    break; // counted as not read back: the report marks the row
                }
                read++;
            }
            long done = System.nanoTime();
            // max(1 ns): a clock that did not move still gives a finite rate.
            result.appendRate = count * 1e9 / Math.max(1, appended - start);
            result.readRate = read * 1e9 / Math.max(1, done - appended);
            result.readBack = read;
            result.search = PlaintextSearch.inCycleFiles(queue.path(), count);
        }
        return result;
    }

    private static final class Result {
        final String name;
        double appendRate;
        double readRate;
        long readBack;
        PlaintextSearch.Found search;

        Result(String name) {
            this.name = name;
        }

        double nanosPerMessage() {
            return 1e9 / appendRate + 1e9 / readRate;
        }
    }
}
