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
 * JLBH runs alternate with runs of this harness at the same point, so both figures sit side by side.
 */
public final class JlbhCrossCheck {

    /**
     * @param subject      subject measured
     * @param messageSize  bytes
     * @param rate         msg/s
     * @param iterations   JLBH iterations per run
     * @param jlbhRunsNs   JLBH end-to-end percentiles, every run, ns
     * @param jlbhWorstNs  JLBH's run with the highest p99
     * @param harness      this harness at the same subject, size and rate
     * @param jlbhOutput   JLBH's own printout
     */
    public record Result(String subject, int messageSize, double rate, long iterations,
                         List<Percentiles> jlbhRunsNs, Percentiles jlbhWorstNs, PointResult harness,
                         String jlbhOutput) {
    }

    private JlbhCrossCheck() {
    }

    /**
     * Alternates one JLBH run and one harness run, {@code max(2, runs)} times, so that bursts of
     * machine noise fall on both alike; each JLBH run is a fresh JLBH instance on a fresh queue
     * (the first with the full warm-up).
     */
    public static Result run(SubjectFactory factory, int size, double rate, BenchConfig config,
                             Pinning pinning) throws Exception {
        // at least one second per run: JLBH reports no p99.9/p99.99 for short runs
        long iterations = Math.max(Math.round(rate), Math.round(rate * config.durationSeconds));
        double seconds = iterations / rate;
        int runs = Math.max(2, config.runs);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<Percentiles> perRun = new ArrayList<>();
        Percentiles worst = null;
        List<RunResult> harnessRuns = new ArrayList<>();
        for (int r = 0; r < runs; r++) {
            int warmUp = (int) Math.max(10_000, r == 0 ? Math.round(config.warmupRate * config.warmupSeconds)
                    : Math.round(rate * config.runWarmupSeconds));
            for (Percentiles p : jlbhOnce(factory, size, rate, iterations, warmUp, config, pinning, out)) {
                perRun.add(p);
                if (worst == null || p.p99() > worst.p99()) {
                    worst = p;
                }
            }
            harnessRuns.add(OpenLoopRun.run(factory, size, rate, config.runWarmupSeconds, seconds, config, pinning));
        }
        PointResult harness = PointResult.of(rate, "jlbh-cross-check", harnessRuns, config.boundNs);
        return new Result(factory.name(), size, rate, iterations, perRun, worst, harness,
                out.toString(StandardCharsets.UTF_8));
    }

    private static List<Percentiles> jlbhOnce(SubjectFactory factory, int size, double rate, long iterations,
                                              int warmUp, BenchConfig config, Pinning pinning,
                                              ByteArrayOutputStream out) throws Exception {
        Path dir = Files.createTempDirectory(Path.of(config.queueRoot), "qe-bench-jlbh-");
        AtomicReference<JLBHResult> result = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (Subject subject = factory.open(new SubjectConfig(size, dir, config.peerCapacity))) {
            Task task = new Task(subject, pinning, failure);
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
        List<Percentiles> perRun = new ArrayList<>();
        if (result.get() != null) {
            for (JLBHResult.RunResult r : result.get().endToEnd().eachRunSummary()) {
                perRun.add(new Percentiles(ns(r.get50thPercentile()), ns(r.get90thPercentile()),
                        ns(r.get99thPercentile()), ns(r.get999thPercentile()),
                        ns(r.get9999thPercentile()), ns(r.getWorst())));
            }
        }
        return perRun;
    }

    /** JLBH leaves a percentile null when a run has too few samples for it: -1 in the report. */
    private static long ns(java.time.Duration d) {
        return d == null ? -1 : d.toNanos();
    }

    /** JLBH calls run(startTimeNs) on its thread; our consumer thread samples. */
    private static final class Task implements JLBHTask {
        private final Subject subject;
        private final Pinning pinning;
        private final AtomicReference<Throwable> failure;
        private volatile boolean running = true;
        private Subject.Producer producer;
        private Thread consumer;

        Task(Subject subject, Pinning pinning, AtomicReference<Throwable> failure) {
            this.subject = subject;
            this.pinning = pinning;
            this.failure = failure;
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
                            jlbh.sampleNanos(System.nanoTime() - intended);
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
    }
}
