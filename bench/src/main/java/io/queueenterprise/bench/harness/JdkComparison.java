package io.queueenterprise.bench.harness;

import io.queueenterprise.bench.subject.SubjectFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The same subjects at one fixed rate and size on several JVMs (the way Chronicle compared
 * OpenJDK 8/11/17 and GraalVM: one rate, long runs, median and 99.99th percentile per JVM). Runs
 * are interleaved across JVMs and subjects in a random order per repetition; the worst run (by
 * p99.99) counts. Each percentile comes with the number of samples at or beyond it, so a reader can
 * judge how much a p99.99 from a short run is worth.
 */
public final class JdkComparison {

    /**
     * @param subject      subject
     * @param java         the java executable
     * @param jvmVersion   what that JVM reported (java.runtime.version, vendor)
     * @param rate         offered msg/s
     * @param messageSize  bytes
     * @param seconds      recorded seconds per run
     * @param runs         runs; the worst by p99.99 is reported
     * @param rateKept     every run kept the rate
     * @param samples      samples of the reported run
     * @param latencyNs    its percentiles
     * @param samplesBeyond percentile -> samples at or beyond it in that run (samples x (1 - p))
     */
    public record Entry(String subject, String java, String jvmVersion, double rate, int messageSize, double seconds,
                        int runs, boolean rateKept, long samples, Percentiles latencyNs,
                        Map<String, Long> samplesBeyond) {
    }

    private JdkComparison() {
    }

    public static List<Entry> run(List<SubjectFactory> subjects, List<String> javas, BenchConfig config,
                                  SubjectWorkers workers, Progress progress) throws Exception {
        Random order = new Random(config.orderSeed + 1);
        record Lane(SubjectFactory subject, String java) {
        }
        List<Lane> lanes = new ArrayList<>();
        for (SubjectFactory s : subjects) {
            for (String j : javas) {
                lanes.add(new Lane(s, j));
            }
        }
        Map<Lane, List<RunResult>> runs = new LinkedHashMap<>();
        for (Lane l : lanes) {
            runs.put(l, new ArrayList<>());
            // JIT warm-up on that JVM at the comparison's own rate and size
            workers.run(l.subject(), l.java(), config.jdkSize, config.jdkRate, config.warmupSeconds, 0.05);
        }
        for (int r = 0; r < Math.max(1, config.runs); r++) {
            List<Lane> shuffled = new ArrayList<>(lanes);
            Collections.shuffle(shuffled, order);
            for (Lane l : shuffled) {
                progress.message(String.format("JDK comparison: %s on %s, run %d", l.subject().name(), l.java(), r + 1));
                runs.get(l).add(workers.run(l.subject(), l.java(), config.jdkSize, config.jdkRate,
                        config.runWarmupSeconds, config.jdkSeconds));
                progress.step("JDK comparison");
            }
        }
        List<Entry> out = new ArrayList<>();
        for (Lane l : lanes) {
            RunResult worst = null;
            boolean kept = true;
            for (RunResult r : runs.get(l)) {
                kept &= r.rateKept();
                if (worst == null || r.latencyNs().p9999() > worst.latencyNs().p9999()) {
                    worst = r;
                }
            }
            Environment.Jvm jvm = workers.jvms().get(l.java());
            String version = jvm == null ? "this JVM" : jvm.vendor() + " " + jvm.version();
            Map<String, Long> beyond = new LinkedHashMap<>();
            for (double p : new double[]{50, 99, 99.9, 99.99}) {
                beyond.put("p" + RateSweep.fmtPct(p), Math.round(worst.received() * (1 - p / 100)));
            }
            out.add(new Entry(l.subject().name(), l.java(), version, config.jdkRate, config.jdkSize, config.jdkSeconds,
                    runs.get(l).size(), kept, worst.received(), worst.latencyNs(), beyond));
        }
        return out;
    }
}
