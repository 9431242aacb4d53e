package io.queueenterprise.bench.harness;

import io.queueenterprise.bench.subject.Subject;
import io.queueenterprise.bench.subject.SubjectConfig;
import io.queueenterprise.bench.subject.SubjectFactory;
import net.openhft.affinity.AffinityLock;
import net.openhft.chronicle.jlbh.JLBH;
import net.openhft.chronicle.jlbh.JLBHOptions;
import net.openhft.chronicle.jlbh.JLBHResult;
import net.openhft.chronicle.jlbh.JLBHTask;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Cross-checks one operating point with Chronicle's own harness, JLBH (coordinated-omission
 * correction on): JLBH's thread sends at the given rate through the subject's producer side, a
 * consumer thread reads and hands {@code nanoTime() - startTimeNs} to {@code jlbh.sampleNanos}.
 * JLBH runs alternate with runs of this harness at the same point, so both figures sit side by
 * side, and {@link CrossCheckVerdict} judges them against the spread of each one's own runs.
 *
 * <p>Both sides run under the same conditions, which they did not until issue 20 (this harness's
 * row was 1,000x JLBH's at the median on an idle machine):
 * <ul>
 *   <li>this JVM runs no subject otherwise, so an unrecorded JIT warm-up run of this harness comes
 *       first, as in a subject JVM before its sweep (JLBH warms up with its own iterations); the
 *       first harness run used to compile the harness's loops and start JFR for the first time in
 *       the JVM while measuring, and as the worst run it became the harness row;</li>
 *   <li>every run, of either instrument, starts after a quiesce (GC, Chronicle's pending unmapping,
 *       a pause), as sweep runs do; JLBH's own warm-up wait gave it one, this harness had none;</li>
 *   <li>no outlier attribution on this harness's side (JFR sampling every 1 ms and a schedstat
 *       thread, on a machine whose 2 cores both spin): JLBH has none;</li>
 *   <li>the verdict compares the median run of each, not the worst.</li>
 * </ul>
 */
public final class JlbhCrossCheck {

    /** Runs of each instrument, at least: the spread of 2 runs says little about the noise. */
    static final int MIN_RUNS = 3;

    /**
     * @param subject          subject measured
     * @param messageSize      bytes
     * @param rate             msg/s
     * @param iterations       JLBH iterations per run
     * @param jlbhRunsNs       JLBH end-to-end percentiles, every run, ns
     * @param jlbhRunsRateKept per JLBH run: whether it kept the rate (the harness's rule)
     * @param jlbhWorstNs      JLBH's run with the highest p99
     * @param harness          this harness at the same subject, size and rate (no attribution)
     * @param verdict          agree / disagree beyond the noise / not comparable (past capacity)
     * @param jlbhOutput       JLBH's own printout
     */
    public record Result(String subject, int messageSize, double rate, long iterations,
                         List<Percentiles> jlbhRunsNs, List<Boolean> jlbhRunsRateKept, Percentiles jlbhWorstNs,
                         PointResult harness, CrossCheckVerdict verdict, String jlbhOutput) {
    }

    /** One JLBH run: its percentiles and whether it kept the rate. */
    record JlbhRun(Percentiles latencyNs, boolean rateKept) {
    }

    private JlbhCrossCheck() {
    }

    /**
     * An unrecorded warm-up run of this harness, then {@code max(3, runs)} rounds of one JLBH run
     * and one harness run (JLBH first in even rounds, the harness first in odd ones), each after a
     * quiesce; each JLBH run is a fresh JLBH instance on a fresh queue (the first with the full
     * warm-up).
     */
    public static Result run(SubjectFactory factory, int size, double rate, BenchConfig benchConfig,
                             Pinning pinning) throws Exception {
        BenchConfig config = benchConfig.copy();
        config.attribution = false; // JLBH samples no stacks and reads no schedstat: nor does this side
        // at least one second per run: JLBH reports no p99.9/p99.99 for short runs
        long iterations = Math.max(Math.round(rate), Math.round(rate * config.durationSeconds));
        double seconds = iterations / rate;
        int runs = Math.max(MIN_RUNS, config.runs);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<Percentiles> perRun = new ArrayList<>();
        List<Boolean> perRunKept = new ArrayList<>();
        List<CrossCheckVerdict.Run> jlbhRuns = new ArrayList<>();
        Percentiles worst = null;
        List<RunResult> harnessRuns = new ArrayList<>();
        OpenLoopRun.run(factory, size, config.warmupRate, config.warmupSeconds, 0.05, config, pinning);
        for (int r = 0; r < runs; r++) {
            int warmUp = (int) Math.max(10_000, r == 0 ? Math.round(config.warmupRate * config.warmupSeconds)
                    : Math.round(rate * config.runWarmupSeconds));
            for (int side = 0; side < 2; side++) {
                SubjectWorker.quiesce(config.quiesceSeconds);
                if ((side == 0) == (r % 2 == 0)) {
                    for (JlbhRun j : jlbhOnce(factory, size, rate, iterations, warmUp, config, pinning, out)) {
                        Percentiles p = j.latencyNs();
                        perRun.add(p);
                        perRunKept.add(j.rateKept());
                        jlbhRuns.add(new CrossCheckVerdict.Run(p.p50(), p.p99(), j.rateKept()));
                        if (worst == null || p.p99() > worst.p99()) {
                            worst = p;
                        }
                    }
                } else {
                    harnessRuns.add(OpenLoopRun.run(factory, size, rate, config.runWarmupSeconds, seconds, config,
                            pinning));
                }
            }
        }
        PointResult harness = PointResult.of(rate, "jlbh-cross-check", harnessRuns, config.boundNs);
        List<CrossCheckVerdict.Run> harnessForVerdict = new ArrayList<>();
        for (RunResult h : harnessRuns) {
            harnessForVerdict.add(new CrossCheckVerdict.Run(h.latencyNs().p50(), h.latencyNs().p99(), h.rateKept()));
        }
        return new Result(factory.name(), size, rate, iterations, perRun, perRunKept, worst, harness,
                CrossCheckVerdict.judge(jlbhRuns, harnessForVerdict), out.toString(StandardCharsets.UTF_8));
    }

    private static List<JlbhRun> jlbhOnce(SubjectFactory factory, int size, double rate, long iterations,
                                          int warmUp, BenchConfig config, Pinning pinning,
                                          ByteArrayOutputStream out) throws Exception {
        Path dir = Files.createTempDirectory(Path.of(config.queueRoot), "qe-bench-jlbh-");
        AtomicReference<JLBHResult> result = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Task task;
        try (Subject subject = factory.open(new SubjectConfig(size, dir, config.peerCapacity))) {
            task = new Task(subject, pinning, failure, warmUp);
            JLBHOptions options = new JLBHOptions()
                    .throughput((int) Math.round(rate), TimeUnit.SECONDS)
                    .accountForCoordinatedOmission(true)
                    .warmUpIterations(warmUp)
                    .iterations(iterations)
                    .runs(1)
                    .recordOSJitter(false)      // its jitter thread would spin on one of our 2 cores
                    .jitterAffinity(false)
                    .skipFirstRun(false)
                    .pauseAfterWarmupMS(0)
                    .acquireLock(() -> AffinityLock.acquireLock(false)) // we pin ourselves
                    .timeout(TimeUnit.SECONDS.toMillis(30))
                    .jlbhTask(task);
            JLBH jlbh = new JLBH(options, new PrintStream(out, true, StandardCharsets.UTF_8), result::set);
            Thread driver = new Thread(() -> {
                pinning.pinCurrentThread(Pinning.PRODUCER);
                try {
                    jlbh.start();
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    task.stop();
                }
            }, "qe-bench-jlbh");
            driver.start();
            driver.join();
            task.awaitConsumer();
        } finally {
            Directories.deleteRecursively(dir);
        }
        if (failure.get() != null) {
            throw new IllegalStateException("JLBH cross-check failed: " + failure.get(), failure.get());
        }
        boolean kept = task.rates(rate, iterations).kept();
        List<JlbhRun> perRun = new ArrayList<>();
        if (result.get() != null) {
            for (JLBHResult.RunResult r : result.get().endToEnd().eachRunSummary()) {
                perRun.add(new JlbhRun(new Percentiles(ns(r.get50thPercentile()), ns(r.get90thPercentile()),
                        ns(r.get99thPercentile()), ns(r.get999thPercentile()),
                        ns(r.get9999thPercentile()), ns(r.getWorst())), kept));
            }
        }
        return perRun;
    }

    /** JLBH leaves a percentile null when a run has too few samples for it: -1 in the report. */
    private static long ns(java.time.Duration d) {
        return d == null ? -1 : d.toNanos();
    }

    /**
     * JLBH calls run(startTimeNs) on its thread; our consumer thread samples. Both count what they
     * did after JLBH's warm-up, so the run is judged by the harness's rate-kept rule.
     */
    private static final class Task implements JLBHTask {
        private final Subject subject;
        private final Pinning pinning;
        private final AtomicReference<Throwable> failure;
        private volatile boolean running = true;
        private Subject.Producer producer;
        private Thread consumer;
        private final MeasuredPart measured;

        Task(Subject subject, Pinning pinning, AtomicReference<Throwable> failure, long warmUp) {
            this.subject = subject;
            this.pinning = pinning;
            this.failure = failure;
            this.measured = new MeasuredPart(warmUp);
        }

        @Override
        public void init(JLBH jlbh) {
            producer = subject.producer(); // init runs on JLBH's (our pinned) thread
            consumer = new Thread(() -> {
                pinning.pinCurrentThread(Pinning.CONSUMER);
                try (Subject.Consumer c = subject.consumer()) {
                    while (running) {
                        long intended = c.poll();
                        if (intended != Subject.NONE) {
                            long now = System.nanoTime();
                            jlbh.sampleNanos(now - intended);
                            measured.received(now);
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "qe-bench-jlbh-consumer");
            consumer.start();
        }

        @Override
        public void run(long startTimeNs) {
            producer.send(startTimeNs);
            measured.sent(startTimeNs, System.nanoTime());
        }

        void stop() {
            running = false;
            if (producer != null) {
                producer.close();
            }
        }

        void awaitConsumer() throws InterruptedException {
            if (consumer != null) {
                consumer.join();
            }
        }

        OpenLoopRun.Rates rates(double rate, long iterations) {
            return measured.rates(rate, iterations);
        }
    }

    /**
     * What a JLBH run sent and received after its warm-up iterations, so that it is judged by the
     * harness's rate-kept rule: JLBH's thread calls {@link #sent}, the consumer thread
     * {@link #received}; {@link #rates} is read once both have ended.
     */
    static final class MeasuredPart {
        private final long warmUp;
        // JLBH's thread only
        private long sent;
        private long firstMeasuredIntendedNs;
        private long lastSendDoneNs;
        // the consumer thread only
        private long received;
        private long lastReceiveNs;

        MeasuredPart(long warmUp) {
            this.warmUp = warmUp;
        }

        /** After each send: JLBH's warm-up iterations come first, then the measured ones. */
        void sent(long intendedNs, long doneNs) {
            if (sent++ >= warmUp) {
                if (sent == warmUp + 1) {
                    firstMeasuredIntendedNs = intendedNs;
                }
                lastSendDoneNs = doneNs;
            }
        }

        /** After each message received (warm-up ones included). */
        void received(long nowNs) {
            received++;
            lastReceiveNs = nowNs;
        }

        /** The harness's rate rule applied to the measured part of {@code iterations} messages. */
        OpenLoopRun.Rates rates(double rate, long iterations) {
            return OpenLoopRun.Rates.of(rate, iterations, Math.max(0, received - warmUp), firstMeasuredIntendedNs,
                    lastSendDoneNs, lastReceiveNs);
        }
    }
}
