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
 * coordinated omission). The producer also measures how far behind schedule it fell; a run whose
 * achieved rate is below 99% of the offered one, or that lost messages, is flagged "rate not kept".
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
        try (Subject subject = factory.open(new SubjectConfig(messageSize, dir, config.peerCapacity))) {
            if (child != null && factory.persists()) {
                Path histFile = dir.resolve("consumer.hdr");
                Remote remote = new Remote() {
                    @Override public void start() throws Exception {
                        String pinned = child.start(factory.name(), dir, messageSize, config.peerCapacity,
                                warmupCount, warmupCount + measuredCount, histFile);
                        pinning.record("consumer-process", pinned);
                    }

                    @Override public long finish(Histogram into) throws Exception {
                        return child.finish(histFile, into, 60 + (long) (warmupSeconds + durationSeconds) * 2);
                    }
                };
                return run(subject, rate, warmupCount, measuredCount, histogram, pinning, config.percentile, remote);
            }
            return run(subject, rate, warmupCount, measuredCount, histogram, pinning, config.percentile, null);
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

        /** Waits for the other process; adds its samples to {@code into}; returns messages received. */
        long finish(Histogram into) throws Exception;
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

    static RunResult run(Subject subject, double rate, long warmupCount, long measuredCount,
                         Histogram histogram, Pinning pinning, double percentile, Remote remote)
            throws Exception {
        final long total = warmupCount + measuredCount;
        final double periodNs = 1e9 / rate;
        final CountDownLatch consumerReady = new CountDownLatch(1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final long[] producerStats = new long[4]; // firstMeasuredIntended, lastSendDone, maxLateness, endLateness
        final long[] received = new long[1];
        final ProducerDone done = new ProducerDone();

        Thread consumer = new Thread(() -> {
            pinning.pinCurrentThread(Pinning.CONSUMER);
            try (Subject.Consumer c = subject.consumer()) {
                consumerReady.countDown();
                long count = 0;
                long deadline = Long.MAX_VALUE;
                while (count < total) {
                    long intended = c.poll();
                    if (intended != Subject.NONE) {
                        long latency = System.nanoTime() - intended;
                        if (count >= warmupCount) {
                            histogram.recordValue(Math.min(Math.max(latency, 0), HIGHEST_TRACKABLE_NS));
                        }
                        count++;
                    } else if (done.done) {
                        // the producer finished: give the consumer a bounded time to drain
                        if (deadline == Long.MAX_VALUE) {
                            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                        } else if (System.nanoTime() > deadline) {
                            break;
                        }
                    }
                }
                received[0] = Math.max(0, count - warmupCount);
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
                consumerReady.countDown();
            }
        }, "qe-bench-consumer");

        Thread producer = new Thread(() -> {
            pinning.pinCurrentThread(Pinning.PRODUCER);
            try (Subject.Producer p = subject.producer()) {
                consumerReady.await();
                final long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1);
                long maxLateness = 0;
                long lateness = 0;
                for (long i = 0; i < total; i++) {
                    final long intended = start + (long) (i * periodNs);
                    long now;
                    while ((now = System.nanoTime()) < intended) {
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
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            } finally {
                done.done = true;
            }
        }, "qe-bench-producer");

        if (remote == null) {
            consumer.start();
        } else {
            remote.start();
            consumerReady.countDown();
        }
        producer.start();
        producer.join();
        if (remote == null) {
            consumer.join();
        } else if (failure.get() == null) {
            received[0] = remote.finish(histogram);
        }
        if (failure.get() != null) {
            throw new IllegalStateException("run failed: " + failure.get(), failure.get());
        }
        double elapsedNs = Math.max(1, producerStats[1] - producerStats[0]);
        // the recorded part spans (measuredCount - 1) periods plus however late the last send was
        double achieved = Math.min(rate, measuredCount * 1e9 / (elapsedNs + periodNs));
        boolean kept = achieved >= RATE_KEPT_FRACTION * rate && received[0] == measuredCount;
        Percentiles p = Percentiles.of(histogram);
        long atPercentile = histogram.getTotalCount() == 0
                ? HIGHEST_TRACKABLE_NS : histogram.getValueAtPercentile(percentile);
        return new RunResult(rate, achieved, kept, measuredCount, received[0], producerStats[2],
                producerStats[3], atPercentile, p);
    }

    private static final class ProducerDone {
        volatile boolean done;
    }
}
