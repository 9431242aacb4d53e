package io.queueenterprise.bench.harness;

import io.queueenterprise.bench.subject.Subject;
import org.HdrHistogram.Histogram;

import java.util.concurrent.TimeUnit;

/**
 * The one consumer loop, for the consumer thread and for the consumer process alike: busy-poll,
 * record {@code nanoTime() - intended} of every message after the warm-up, stop after
 * {@code total} messages or once no message has arrived for {@link #IDLE_LIMIT_NS} (a lost
 * message or a dead producer must not hang the bench). The same stop rule on both sides means a
 * run's "received" count means the same thing whichever side consumed it.
 */
final class ConsumerLoop {

    static final long IDLE_LIMIT_NS = TimeUnit.SECONDS.toNanos(5);

    private final Histogram histogram;
    private final Outliers.Recorder outliers;
    private final Outliers.GapLog gaps;
    /** Messages received after the warm-up. */
    long received;
    /** nanoTime of the last message received (0 if none). */
    long lastReceiveNs;

    ConsumerLoop(Histogram histogram, Outliers.Recorder outliers, Outliers.GapLog gaps) {
        this.histogram = histogram;
        this.outliers = outliers;
        this.gaps = gaps;
    }

    void consume(Subject.Consumer c, long warmupCount, long total) {
        long count = 0;
        long lastMessage = System.nanoTime();
        long lastEmptyPoll = 0; // 0: the previous poll returned a message (its gap is not idle time)
        while (count < total) {
            long intended = c.poll();
            long now = System.nanoTime();
            if (intended != Subject.NONE) {
                if (count >= warmupCount) {
                    long latency = Math.min(Math.max(now - intended, 0), OpenLoopRun.HIGHEST_TRACKABLE_NS);
                    histogram.recordValue(latency);
                    if (outliers != null) {
                        outliers.record(intended, latency);
                    }
                }
                count++;
                lastMessage = now;
                lastEmptyPoll = 0;
            } else {
                // two empty polls in a row further apart than the threshold: the core was taken away
                if (gaps != null && lastEmptyPoll != 0) {
                    gaps.record(lastEmptyPoll, now - lastEmptyPoll);
                }
                lastEmptyPoll = now;
                if (now - lastMessage > IDLE_LIMIT_NS) {
                    break;
                }
            }
        }
        received = Math.max(0, count - warmupCount);
        lastReceiveNs = lastMessage;
    }

    static long idleLimitSeconds() {
        return TimeUnit.NANOSECONDS.toSeconds(IDLE_LIMIT_NS);
    }
}
