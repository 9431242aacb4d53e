package io.queueenterprise.bench.ratio;

import io.queueenterprise.bench.harness.Directories;
import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.replication.AckMode;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Throughput ratios of the excerpt paths, readable on a loaded machine.
 *
 * <p>Why not JMH alone: JMH measures one subject after another, seconds apart, so on a shared 2-core machine the
 * load changes between subjects and their ratio is mostly noise (errors of ±50–300 % were seen). Here every
 * subject runs a short slice (a few milliseconds) in each round, in a fresh random order per round; a round's
 * ratios compare slices taken within tens of milliseconds of each other, so load that lasts longer than a round
 * hits numerator and denominator alike. The median over rounds is reported with its interquartile range.
 * Slices are timed in the thread's CPU time, not wall time, so time spent preempted by other processes (the
 * largest noise on a shared machine) is not counted; what remains is their effect on caches and on a shared
 * hyperthread, which the interleaving spreads over all subjects.
 *
 * <p>What it does not remove: load that changes within a round (a stall inside one slice shows as a bad round,
 * which the median ignores), and the subjects sharing one JVM (each has its own loop, so the JIT compiles each
 * path for itself; the library's interfaces see two implementations, as an application using plain and
 * encrypted queues would).
 */
public final class PathRatios {
    /** Issue 6's targets: encrypted throughput over the library's plain throughput, per size. */
    static final Map<String, double[]> TARGETS = new LinkedHashMap<>();

    static {
        TARGETS.put("library-ctr", new double[]{0.75, 0.65});
        TARGETS.put("library-ctr-poly1305", new double[]{0.6, 0.5});
    }

    /**
     * How a subject is opened: in a queue folder of its own (created here), for one excerpt size and key ring; a remote
     * client with {@code sendBatching} as its linger (the other subjects ignore it).
     */
    private interface Opener {
        ExcerptPath open(Path folder, int size, KeyRing ring, java.time.Duration sendBatching) throws IOException;
    }

    /** Every subject by name, in the order of the table. */
    private static final Map<String, Opener> OPENERS = new LinkedHashMap<>();

    static {
        OPENERS.put("chronicle-raw", (dir, size, ring, batching) -> new ExcerptPath.ChronicleRaw(Files.createDirectory(dir), size, false));
        OPENERS.put("chronicle-raw-heap", (dir, size, ring, batching) -> new ExcerptPath.ChronicleRaw(Files.createDirectory(dir), size, true));
        OPENERS.put("chronicle-raw-document", (dir, size, ring, batching) -> new ExcerptPath.ChronicleRawDocument(Files.createDirectory(dir), size));
        OPENERS.put("library-plain", (dir, size, ring, batching) -> new ExcerptPath.Library(Files.createDirectory(dir), size, ring, null));
        OPENERS.put("library-ctr", (dir, size, ring, batching) -> new ExcerptPath.Library(Files.createDirectory(dir), size, ring, CipherMode.AES_128_CTR));
        OPENERS.put("library-ctr-poly1305",
                (dir, size, ring, batching) -> new ExcerptPath.Library(Files.createDirectory(dir), size, ring, CipherMode.AES_128_CTR_POLY1305));
        OPENERS.put("seal+open-ctr", (dir, size, ring, batching) -> new ExcerptPath.SealOpen(size, ring, CipherMode.AES_128_CTR));
        OPENERS.put("seal+open-ctr-poly1305", (dir, size, ring, batching) -> new ExcerptPath.SealOpen(size, ring, CipherMode.AES_128_CTR_POLY1305));
    }

    /** Every subject, in the order of the table. */
    public static final List<String> SUBJECTS = List.copyOf(OPENERS.keySet());

    /**
     * The replicated suite ({@code --replicated}, issue 18): the local encrypted library against replication to a
     * follower, async and quorum (pipelined), and a remote client's pipelined appends to such a leader, async and
     * quorum (each a cluster of its own, the lease on). Timed in wall time, not the calling thread's CPU time: a
     * replicated slice's work is mostly on the nodes' threads. The remote subjects' throughput is saturation:
     * acknowledged appends per second with the client's window kept full.
     */
    private static final Map<String, Opener> REPLICATED_OPENERS = new LinkedHashMap<>();

    static {
        REPLICATED_OPENERS.put("library-ctr-poly1305",
                (dir, size, ring, batching) -> new ExcerptPath.Library(Files.createDirectory(dir), size, ring, CipherMode.AES_128_CTR_POLY1305));
        REPLICATED_OPENERS.put("replicated-async", (dir, size, ring, batching) -> new ExcerptPath.Replicated(dir, size, AckMode.ASYNC));
        REPLICATED_OPENERS.put("replicated-quorum", (dir, size, ring, batching) -> new ExcerptPath.Replicated(dir, size, AckMode.QUORUM));
        REPLICATED_OPENERS.put("remote-append-async", (dir, size, ring, batching) -> new ExcerptPath.Remote(dir, size, AckMode.ASYNC, batching));
        REPLICATED_OPENERS.put("remote-append-quorum", (dir, size, ring, batching) -> new ExcerptPath.Remote(dir, size, AckMode.QUORUM, batching));
    }

    /** The replicated suite's subjects, in the order of the table. */
    public static final List<String> REPLICATED_SUBJECTS = List.copyOf(REPLICATED_OPENERS.keySet());

    /** Issue 18's targets: {numerator, denominator, at least}. */
    static final String[][] REPLICATED_TARGETS = {
            {"replicated-quorum", "replicated-async", "0.7"},
            {"replicated-async", "library-ctr-poly1305", "0.5"},
            {"remote-append-async", "replicated-async", "0.5"},
            {"remote-append-quorum", "remote-append-async", "0.7"},
    };

    /** The replicated suite (wall time) rather than the excerpt paths (CPU time). */
    private boolean replicated;

    public PathRatios replicated(boolean replicated) {
        this.replicated = replicated;
        return this;
    }

    private final int size;
    private final int slice;
    private final int rounds;
    private final int warmupRounds;
    private final long seed;
    /** Run just this subject (for a profiler), or null for all. */
    private String only;

    /** The remote subjects' {@code RemoteQueue.Builder.sendBatching} linger; null: the client's default (adaptive). */
    private java.time.Duration remoteSendBatching = ExcerptPath.Remote.DEFAULT_SEND_BATCHING;

    public PathRatios remoteSendBatching(java.time.Duration linger) {
        this.remoteSendBatching = linger;
        return this;
    }

    public PathRatios only(String subject) {
        this.only = subject;
        return this;
    }

    public PathRatios(int size, int slice, int rounds, int warmupRounds, long seed) {
        if (size < 1 || slice < 1 || rounds < 3 || warmupRounds < 0) {
            throw new IllegalArgumentException("size, slice >= 1, rounds >= 3, warm-up rounds >= 0 (got size=" + size
                    + ", slice=" + slice + ", rounds=" + rounds + ", warm-up=" + warmupRounds + ")");
        }
        this.size = size;
        this.slice = slice;
        this.rounds = rounds;
        this.warmupRounds = warmupRounds;
        this.seed = seed;
    }

    /** ns per append+read of every subject, per measured round: {@code [subject][round]}. */
    public record Result(int size, List<String> subjects, List<String> descriptions, double[][] nsPerOp, boolean wallTime) {
        int indexOf(String subject) {
            return subjects.indexOf(subject);
        }

        double medianNs(int s) {
            return percentile(nsPerOp[s], 50);
        }

        /** Per-round throughput ratio subject / reference (= reference ns / subject ns), at a percentile of rounds. */
        double ratio(int subject, int reference, double p) {
            double[] r = new double[nsPerOp[subject].length];
            for (int i = 0; i < r.length; i++) {
                r[i] = nsPerOp[reference][i] / nsPerOp[subject][i];
            }
            return percentile(r, p);
        }

        /** Per-round difference subject - reference in ns, median. */
        double medianExtraNs(int subject, int reference) {
            double[] d = new double[nsPerOp[subject].length];
            for (int i = 0; i < d.length; i++) {
                d[i] = nsPerOp[subject][i] - nsPerOp[reference][i];
            }
            return percentile(d, 50);
        }
    }

    public Result run(PrintStream progress) throws IOException {
        Path shm = Path.of("/dev/shm");
        Path root = Files.createTempDirectory(Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")), "qe-ratios-");
        byte[] material = new byte[32];
        new SecureRandom().nextBytes(material);
        KeyRing ring = KeyRing.single(MasterKey.of(1, material));
        Arrays.fill(material, (byte) 0);
        List<ExcerptPath> paths = new ArrayList<>();
        // a run stopped by Ctrl-C or SIGTERM removes its queues too: under /dev/shm they would hold memory until reboot
        Thread removeAtExit = new Thread(() -> deleteQuietly(root), "qe-ratios-cleanup");
        Runtime.getRuntime().addShutdownHook(removeAtExit);
        try {
            for (Map.Entry<String, Opener> subject : (replicated ? REPLICATED_OPENERS : OPENERS).entrySet()) {
                if (only == null || only.equals(subject.getKey())) {
                    paths.add(subject.getValue().open(root.resolve(subject.getKey()), size, ring, remoteSendBatching));
                }
            }
            if (paths.isEmpty()) {
                throw new IllegalArgumentException("no subject named '" + only + "'; the subjects are "
                        + (replicated ? REPLICATED_SUBJECTS : SUBJECTS));
            }
            int n = paths.size();
            double[][] ns = new double[n][rounds];
            int[] order = new int[n];
            for (int i = 0; i < n; i++) {
                order[i] = i;
            }
            SplittableRandom random = new SplittableRandom(seed);
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            if (!threads.isCurrentThreadCpuTimeSupported()) {
                throw new IllegalStateException("this JVM cannot measure a thread's CPU time, which the ratios need");
            }
            long sink = 0;
            for (int round = -warmupRounds; round < rounds; round++) {
                shuffle(order, random);
                for (int k = 0; k < n; k++) {
                    int s = order[k];
                    long start = replicated ? System.nanoTime() : threads.getCurrentThreadCpuTime();
                    sink += paths.get(s).run(slice);
                    long elapsed = (replicated ? System.nanoTime() : threads.getCurrentThreadCpuTime()) - start;
                    if (round >= 0) {
                        ns[s][round] = (double) elapsed / slice;
                    }
                }
                if (progress != null && (round + 1) % 10 == 0) {
                    progress.printf("  %d B: round %d of %d%n", size, round + 1, rounds);
                }
            }
            if (sink == 42) {
                progress.print(""); // consumes the checksums
            }
            List<String> names = new ArrayList<>();
            List<String> descriptions = new ArrayList<>();
            for (ExcerptPath p : paths) {
                names.add(p.name);
                String measured = p.measured();
                descriptions.add(measured.isEmpty() ? p.description : p.description + "; " + measured);
            }
            return new Result(size, names, descriptions, ns, replicated);
        } finally {
            for (ExcerptPath p : paths) {
                p.close();
            }
            Directories.deleteRecursively(root);
            try {
                Runtime.getRuntime().removeShutdownHook(removeAtExit);
            } catch (IllegalStateException stopping) {
                // the JVM is stopping: the hook runs (or ran) and finds the folder gone
            }
        }
    }

    private static void deleteQuietly(Path root) {
        try {
            Directories.deleteRecursively(root);
        } catch (RuntimeException e) {
            System.err.println("qe ratios: could not remove " + root + ": " + e.getMessage());
        }
    }

    /** The table a person reads: median ns per append+read, ratios to the library's plain path with their IQR. */
    public static void print(Result r, PrintStream out) {
        if (r.subjects().size() == 1) {
            out.printf("%n%d B, %s alone: median %.1f ns per append + read%n", r.size(), r.subjects().get(0), r.medianNs(0));
            return;
        }
        if (r.wallTime()) {
            printReplicated(r, out);
            return;
        }
        int plain = r.indexOf("library-plain");
        int raw = r.indexOf("chronicle-raw");
        int rounds = r.nsPerOp()[0].length;
        out.printf("%n%d B, %d rounds: median ns per append + read (and the interquartile range of the per-round ratio)%n",
                r.size(), rounds);
        out.printf("%-24s %10s %22s %22s%n", "subject", "ns/op", "throughput / plain", "throughput / raw");
        for (int s = 0; s < r.subjects().size(); s++) {
            out.printf("%-24s %10.1f %22s %22s%n", r.subjects().get(s), r.medianNs(s), ratioText(r, s, plain),
                    ratioText(r, s, raw));
        }
        int ctr = r.indexOf("library-ctr");
        int auth = r.indexOf("library-ctr-poly1305");
        int sealCtr = r.indexOf("seal+open-ctr");
        int sealAuth = r.indexOf("seal+open-ctr-poly1305");
        out.printf("Cost over library-plain (median of per-round differences): ctr +%.0f ns (crypto alone %.0f ns), "
                        + "ctr-poly1305 +%.0f ns (crypto alone %.0f ns)%n",
                r.medianExtraNs(ctr, plain), r.medianNs(sealCtr), r.medianExtraNs(auth, plain), r.medianNs(sealAuth));
        int sizeColumn = r.size() >= 256 ? 1 : 0;
        for (Map.Entry<String, double[]> target : TARGETS.entrySet()) {
            if (r.size() != 40 && r.size() != 256) {
                break;
            }
            int s = r.indexOf(target.getKey());
            double median = r.ratio(s, plain, 50);
            double goal = target.getValue()[sizeColumn];
            out.printf("Target %s / plain >= %.2f at %d B: median %.2f, %s%n", target.getKey(), goal, r.size(), median,
                    median >= goal ? "met in this run" : "NOT met in this run");
        }
    }

    /** The replicated suite: throughput (messages/s, wall time) and ratios with their IQR, against issue 18's targets. */
    private static void printReplicated(Result r, PrintStream out) {
        int local = r.indexOf("library-ctr-poly1305");
        int async = r.indexOf("replicated-async");
        int rounds = r.nsPerOp()[0].length;
        out.printf("%n%d B, %d rounds, wall time: median ns per message appended and read back (replicated: on the"
                + " follower; quorum: acknowledged; remote: acknowledged, the client's window kept full), and the"
                + " interquartile range of the per-round ratio%n", r.size(), rounds);
        out.printf("%-24s %10s %12s %26s %26s%n", "subject", "ns/msg", "msg/s", "throughput / local", "throughput / async");
        for (int s = 0; s < r.subjects().size(); s++) {
            out.printf("%-24s %10.1f %12.0f %26s %26s%n", r.subjects().get(s), r.medianNs(s), 1e9 / r.medianNs(s),
                    ratioText(r, s, local), ratioText(r, s, async));
        }
        out.printf("Subjects:%n");
        for (int s = 0; s < r.subjects().size(); s++) {
            out.printf("  %s: %s%n", r.subjects().get(s), r.descriptions().get(s));
        }
        for (String[] target : REPLICATED_TARGETS) {
            int s = r.indexOf(target[0]);
            int reference = r.indexOf(target[1]);
            if (s < 0 || reference < 0) {
                continue;
            }
            double goal = Double.parseDouble(target[2]);
            double median = r.ratio(s, reference, 50);
            out.printf("Target %s / %s >= %.2f at %d B: median %.2f (IQR %.2f-%.2f), %s%n", target[0], target[1], goal,
                    r.size(), median, r.ratio(s, reference, 25), r.ratio(s, reference, 75),
                    median >= goal ? "met in this run" : "NOT met in this run");
        }
    }

    private static String ratioText(Result r, int s, int reference) {
        if (reference < 0) {
            return "-";
        }
        if (s == reference) {
            return "1";
        }
        return String.format("%.2f (%.2f-%.2f)", r.ratio(s, reference, 50), r.ratio(s, reference, 25), r.ratio(s, reference, 75));
    }

    static double percentile(double[] values, double p) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        double rank = p / 100 * (sorted.length - 1);
        int lo = (int) Math.floor(rank);
        int hi = (int) Math.ceil(rank);
        return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
    }

    private static void shuffle(int[] order, SplittableRandom random) {
        for (int i = order.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }
}
