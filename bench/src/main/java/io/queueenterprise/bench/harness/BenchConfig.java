package io.queueenterprise.bench.harness;

import com.fasterxml.jackson.annotation.JsonIgnore;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything a bench run is configured with. Mutable (the CLI and tests fill it in); serialized
 * into the JSON's {@code configuration} object.
 */
public final class BenchConfig {
    public String profile = "default";
    /** The latency bound, ns (default 10 µs). */
    public long boundNs = 10_000;
    /** The percentile judged against the bound (default 99). */
    public double percentile = 99.0;
    public List<Integer> messageSizes = new ArrayList<>(List.of(40, 256));
    public List<String> subjects = new ArrayList<>();
    /** Recorded seconds per run. */
    public double durationSeconds = 1.0;
    /** Unrecorded seconds at the start of every run (same rate, same queue). */
    public double runWarmupSeconds = 0.2;
    /** One unrecorded JIT warm-up run per subject and size before its sweep, seconds. */
    public double warmupSeconds = 2.0;
    /** Warm-up run rate, msg/s. */
    public double warmupRate = 200_000;
    /** Runs per point; the worst run (highest value at the percentile) counts. */
    public int runs = 3;
    /** Coarse sweep: 1-2-5 steps from minRate up to maxRate (msg/s). */
    public double minRate = 20_000;
    public double maxRate = 5_000_000;
    /** Binary search stops when hi/lo <= 1 + resolution. */
    public double resolution = 0.05;
    /** Coarse sweep also stops once the percentile exceeds the largest ladder bound. */
    public List<Integer> ladderUs = new ArrayList<>(List.of(10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000));
    /** Queue files go under here: /dev/shm when present (what a latency user does), or the temp area. */
    public String queueRoot;
    /** Capacity of the bounded in-memory peers (power of two). */
    public int peerCapacity = 65_536;
    /** Pin producer to CPU 0 and consumer to CPU 1 when at least 2 CPUs are available. */
    public boolean pin = true;
    /** JLBH cross-check: rate (msg/s), 0 disables it. Runs at the first message size. */
    public double jlbhRate = 100_000;
    /** JLBH cross-check subject; null = library-plain if registered, else chronicle-raw. */
    public String jlbhSubject;
    /** Consume persisting subjects in another process reading the same queue (peers stay in-process). */
    public boolean consumerProcess;
    /** Attribute messages over the bound to GC, safepoints, lost CPU or sampled stacks (JFR). */
    public boolean attribution = true;
    /** Run each subject in a JVM of its own (false: every subject in this JVM; tests only). */
    public boolean forkSubjects = true;
    /** Java executables: the sweep runs on the first; the JDK comparison on each. Empty = this JVM's. */
    public List<String> jvms = new ArrayList<>();
    /** JDK comparison: rate (msg/s, 0 = off unless several JVMs are given), size, recorded seconds per run. */
    public double jdkRate = 100_000;
    public int jdkSize = 256;
    public double jdkSeconds = 5;
    /** Subjects of the JDK comparison (empty = the sweep's subjects). */
    public List<String> jdkSubjects = new ArrayList<>();
    /** Run the rate sweep (false: only the JDK comparison and/or the JLBH cross-check). */
    public boolean sweep = true;
    /** Seed of the per-round random order of subjects (recorded, so an order can be replayed). */
    public long orderSeed = System.nanoTime();
    /** Pause between runs after the subject's JVM has collected garbage and released Chronicle's mappings. */
    public double quiesceSeconds = 0.1;
    /** Stop starting new points after this many seconds (0 = no limit); calibrate's bounded run time. */
    public double timeLimitSeconds;
    /** Seconds of the busy-spin noise probe run before the bench. */
    public double noiseProbeSeconds = 1.0;
    /** Output folder (JSON, Markdown, PNG). */
    @JsonIgnore
    public Path outDir = Path.of("bench-results");
    /** Show a progress bar on a terminal. */
    @JsonIgnore
    public boolean progress = true;

    /** A copy (a step that runs with a setting of its own changes the copy, not the bench's configuration). */
    public BenchConfig copy() {
        BenchConfig c = SubjectWorker.mapper().convertValue(this, BenchConfig.class);
        c.outDir = outDir;
        c.progress = progress;
        return c;
    }

    /** The quick profile: finishes in well under 2 minutes on a 2-core machine. */
    public static BenchConfig quick() {
        BenchConfig c = new BenchConfig();
        c.profile = "quick";
        c.durationSeconds = 0.25;
        c.runWarmupSeconds = 0.05;
        c.warmupSeconds = 0.5;
        c.runs = 1;
        c.minRate = 50_000;
        c.maxRate = 5_000_000;
        c.resolution = 0.10;
        c.jlbhRate = 100_000;
        c.jdkSeconds = 1;
        return c;
    }

    /** The default profile (about 10-15 minutes for all subjects at 2 sizes). */
    public static BenchConfig defaults() {
        return new BenchConfig();
    }

    /** /dev/shm if it exists and is writable, else java.io.tmpdir. */
    public static String defaultQueueRoot() {
        Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm)) {
            return shm.toString();
        }
        return System.getProperty("java.io.tmpdir");
    }

    /** 1-2-5 steps between minRate and maxRate (inclusive of maxRate). */
    public List<Double> coarseRates() {
        List<Double> rates = new ArrayList<>();
        double decade = Math.pow(10, Math.floor(Math.log10(minRate)));
        outer:
        for (; ; decade *= 10) {
            for (double m : new double[]{1, 2, 5}) {
                double r = decade * m;
                if (r > maxRate * 1.0001) {
                    break outer;
                }
                if (r >= minRate * 0.9999) {
                    rates.add(r);
                }
            }
        }
        if (rates.isEmpty() || rates.get(rates.size() - 1) < maxRate * 0.9999) {
            rates.add(maxRate);
        }
        return rates;
    }
}
