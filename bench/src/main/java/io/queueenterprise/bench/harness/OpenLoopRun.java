package io.queueenterprise.bench.harness;

import io.queueenterprise.bench.subject.Subject;
import io.queueenterprise.bench.subject.SubjectConfig;
import io.queueenterprise.bench.subject.SubjectFactory;
import org.HdrHistogram.Histogram;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One open-loop, fixed-rate run: the producer thread busy-spins to each message's intended send
 * time ({@code start + i / rate}), writes that time into the message and sends it; the consumer
 * thread busy-polls and records {@code nanoTime() - intended} into an HdrHistogram. A stall on
 * either side therefore shows up in the latency of every message scheduled during it (no
 * coordinated omission). A run keeps its rate only if the producer kept its schedule (achieved
 * >= 99% of offered), nothing was lost and the consumer kept up (received >= 99% of offered: the
 * backlog stayed bounded), so an unbounded persisted queue whose consumer lags cannot pass for one
 * that keeps up.
 */
public final class OpenLoopRun {

    static final long HIGHEST_TRACKABLE_NS = TimeUnit.SECONDS.toNanos(30);
    private static final double RATE_KEPT_FRACTION = 0.99;

    private OpenLoopRun() {
    }

    /** Runs once and returns the result; the queue directory is created and deleted here. */
    public static RunResult run(SubjectFactory factory, int messageSize, double rate,
                                double warmupSeconds, double durationSeconds, BenchConfig config,
                                Pinning pinning) throws Exception {
        long warmupCount = Math.max(0, Math.round(rate * warmupSeconds));
        long measuredCount = Math.max(1, Math.round(rate * durationSeconds));
        Path dir = Files.createTempDirectory(Path.of(config.queueRoot), "qe-bench-" + factory.name() + "-");
        LIVE_DIRS.add(dir);
        Histogram histogram = new Histogram(HIGHEST_TRACKABLE_NS, 3);
        RemoteConsumerProcess child = remoteConsumer;
        Plan plan = new Plan(rate, warmupCount, measuredCount, config.percentile, config.boundNs,
                config.attribution, dir);
        try (Subject subject = factory.open(new SubjectConfig(messageSize, dir, config.peerCapacity))) {
            if (child != null && factory.persists()) {
                Path histFile = dir.resolve("consumer.hdr");
                Remote remote = new Remote() {
                    @Override public void start() throws Exception {
                        String pinned = child.start(factory.name(), dir, messageSize, config.peerCapacity,
                                warmupCount, warmupCount + measuredCount, histFile);
                        pinning.record("consumer-process", pinned);
                    }

                    @Override public long[] finish(Histogram into) throws Exception {
                        return child.finish(histFile, into, 60 + (long) (warmupSeconds + durationSeconds) * 2);
                    }
                };
                return run(subject, plan, histogram, pinning, remote);
            }
            return run(subject, plan, histogram, pinning, null);
        } finally {
            Directories.deleteRecursively(dir);
            LIVE_DIRS.remove(dir);
        }
    }

    /** When set, persisting subjects are consumed in that other process (--consumer-process). */
    private static volatile RemoteConsumerProcess remoteConsumer;

    static void useRemoteConsumer(RemoteConsumerProcess child) {
        remoteConsumer = child;
    }

    /** The consumer side when it runs in another process. */
    interface Remote {
        /** Tells the other process to open its consumer side; returns once it is polling. */
        void start() throws Exception;

        /** Waits for the other process; adds its samples to {@code into}; returns {received, lastReceiveNs}. */
        long[] finish(Histogram into) throws Exception;
    }

    /** Queue directories of runs in progress, deleted by a shutdown hook if the JVM is stopped mid-run. */
    private static final java.util.Set<Path> LIVE_DIRS = java.util.concurrent.ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (Path p : LIVE_DIRS) {
                try {
                    Directories.deleteRecursively(p);
                } catch (RuntimeException ignored) {
                    // best effort at exit
                }
            }
        }, "qe-bench-cleanup"));
    }

    /**
     * What one run does.
     *
     * @param rate          offered msg/s
     * @param warmupCount   unrecorded messages first
     * @param measuredCount recorded messages
     * @param percentile    the percentile reported as valueAtPercentileNs
     * @param boundNs       the bound outliers are judged against
     * @param attribution   record outliers and their causes (JFR, schedstat, spin gaps)
     * @param scratch       a directory for the attribution's recording (deleted with the run)
     */
    record Plan(double rate, long warmupCount, long measuredCount, double percentile, long boundNs,
                boolean attribution, Path scratch) {
    }

    /**
     * Whether a run kept its offered rate: the producer achieved >= 99 % of it over the recorded
     * part, every recorded message arrived, and the consumer received >= 99 % of it (the backlog
     * stayed bounded). The JLBH cross-check judges JLBH's runs by the same rule.
     *
     * @param achieved msg/s sent over the recorded part
     * @param received msg/s received from the first recorded intended send time to the last receipt
     */
    record Rates(double achieved, double received, boolean kept) {
        static Rates of(double rate, long measuredCount, long receivedCount, long firstMeasuredIntendedNs,
                        long lastSendDoneNs, long lastReceiveNs) {
            double periodNs = 1e9 / rate;
            double elapsedNs = Math.max(1, lastSendDoneNs - firstMeasuredIntendedNs);
            // the recorded part spans (measuredCount - 1) periods plus however late the last send was
            double achieved = Math.min(rate, measuredCount * 1e9 / (elapsedNs + periodNs));
            double receiveSpanNs = Math.max(1, lastReceiveNs - firstMeasuredIntendedNs);
            double receivedRate = Math.min(rate, receivedCount * 1e9 / (receiveSpanNs + periodNs));
            boolean kept = achieved >= RATE_KEPT_FRACTION * rate && receivedCount == measuredCount
                    && receivedRate >= RATE_KEPT_FRACTION * rate;
            return new Rates(achieved, receivedRate, kept);
        }
    }

    static RunResult run(Subject subject, Plan plan, Histogram histogram, Pinning pinning, Remote remote)
            throws Exception {
        final long warmupCount = plan.warmupCount();
        final long measuredCount = plan.measuredCount();
        final double rate = plan.rate();
        final long total = warmupCount + measuredCount;
        final double periodNs = 1e9 / rate;
        final CountDownLatch consumerReady = new CountDownLatch(1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final long[] producerStats = new long[5]; // firstMeasuredIntended, lastSendDone, maxLateness, endLateness, lastIntended
        final boolean attribute = plan.attribution() && remote == null;
        final Outliers.Recorder outliers = attribute ? new Outliers.Recorder(plan.boundNs()) : null;
        final long gapNs = Outliers.gapThresholdNs(plan.boundNs());
        final Outliers.GapLog producerGaps = attribute ? new Outliers.GapLog(gapNs) : null;
        final Outliers.GapLog consumerGaps = attribute ? new Outliers.GapLog(gapNs) : null;
        final Outliers.Capture capture = attribute ? new Outliers.Capture() : null;
        final ConsumerLoop loop = new ConsumerLoop(histogram, outliers, consumerGaps);

        Thread consumer = new Thread(() -> {
            pinning.pinCurrentThread(Pinning.CONSUMER);
            if (capture != null) {
                capture.register(Pinning.CONSUMER, net.openhft.affinity.Affinity.getThreadId());
            }
            try (Subject.Consumer c = subject.consumer()) {
                consumerReady.countDown();
                loop.consume(c, warmupCount, total);
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
                consumerReady.countDown();
            }
        }, Outliers.CONSUMER_THREAD);

        Thread producer = new Thread(() -> {
            pinning.pinCurrentThread(Pinning.PRODUCER);
            if (capture != null) {
                capture.register(Pinning.PRODUCER, net.openhft.affinity.Affinity.getThreadId());
            }
            try (Subject.Producer p = subject.producer()) {
                consumerReady.await();
                final long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1);
                long maxLateness = 0;
                long lateness = 0;
                long intended = start;
                for (long i = 0; i < total; i++) {
                    intended = start + (long) (i * periodNs);
                    long now;
                    long lastSpin = 0; // the first read after a send measures the send, not idle time
                    while ((now = System.nanoTime()) < intended) {
                        if (producerGaps != null && lastSpin != 0) {
                            producerGaps.record(lastSpin, now - lastSpin);
                        }
                        lastSpin = now;
                        Thread.onSpinWait();
                    }
                    p.send(intended);
                    if (i >= warmupCount) {
                        lateness = now - intended;
                        if (lateness > maxLateness) {
                            maxLateness = lateness;
                        }
                    }
                }
                producerStats[0] = start + (long) (warmupCount * periodNs);
                producerStats[1] = System.nanoTime();
                producerStats[2] = maxLateness;
                producerStats[3] = lateness;
                producerStats[4] = intended;
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        }, Outliers.PRODUCER_THREAD);

        if (remote == null) {
            consumer.start();
        } else {
            remote.start();
            consumerReady.countDown();
        }
        producer.start();
        producer.join();
        long received;
        long lastReceive;
        if (remote == null) {
            consumer.join();
            received = loop.received;
            lastReceive = loop.lastReceiveNs;
        } else if (failure.get() == null) {
            long[] r = remote.finish(histogram);
            received = r[0];
            lastReceive = r[1];
        } else {
            received = 0;
            lastReceive = 0;
        }
        Outliers.Summary attribution = capture == null ? null
                : capture.finish(outliers, producerGaps, consumerGaps, plan.scratch());
        if (failure.get() != null) {
            throw new IllegalStateException("run failed: " + failure.get(), failure.get());
        }
        Rates rates = Rates.of(rate, measuredCount, received, producerStats[0], producerStats[1], lastReceive);
        Percentiles p = Percentiles.of(histogram);
        long atPercentile = histogram.getTotalCount() == 0
                ? HIGHEST_TRACKABLE_NS : histogram.getValueAtPercentile(plan.percentile());
        return new RunResult(rate, rates.achieved(), rates.received(), rates.kept(), measuredCount, received, producerStats[2],
                producerStats[3], Math.max(0, lastReceive - producerStats[4]), atPercentile, p, attribution);
    }

}
