package io.queueenterprise.bench.harness;

import io.queueenterprise.bench.subject.Subject;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The instrument's bookkeeping, tested with delays injected far above this machine's noise (a
 * 200 ms stall against millisecond scheduler stalls). No assertion on any measured latency or rate
 * of a real queue: only on what the harness must record when we know what happened.
 */
@org.junit.jupiter.api.Tag("unit")
class InstrumentTest {

    private static final double RATE = 10_000;          // msg/s: one message every 100 us
    private static final long STALL_NS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long STALL_AT = 2_000;          // measured message index at which the stall starts

    /**
     * An unbounded in-memory queue whose producer or consumer can be made to misbehave: the hooks
     * run on the producer (before each send) and consumer (after each received message) threads.
     */
    private static final class TestSubject implements Subject {
        private final ConcurrentLinkedQueue<Long> queue = new ConcurrentLinkedQueue<>();
        private final LongConsumer beforeSend;
        private final LongConsumer afterReceive;

        TestSubject(LongConsumer beforeSend, LongConsumer afterReceive) {
            this.beforeSend = beforeSend;
            this.afterReceive = afterReceive;
        }

        @Override public Producer producer() {
            long[] n = {0};
            return intended -> {
                beforeSend.accept(n[0]++);
                queue.offer(intended);
            };
        }

        @Override public Consumer consumer() {
            long[] n = {0};
            return () -> {
                Long m = queue.poll();
                if (m == null) {
                    return NONE;
                }
                afterReceive.accept(n[0]++);
                return m;
            };
        }

        @Override public void close() {
        }
    }

    private static void sleepNanos(long ns) {
        try {
            TimeUnit.NANOSECONDS.sleep(ns);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static RunResult run(Subject s, long warmup, long measured, Histogram h, Path scratch, boolean attribution)
            throws Exception {
        OpenLoopRun.Plan plan = new OpenLoopRun.Plan(RATE, warmup, measured, 99, 1_000_000, attribution, scratch);
        return OpenLoopRun.run(s, plan, h, new Pinning(false), null);
    }

    /**
     * Every message scheduled during a stall must carry the stall: the one scheduled {@code x} into a
     * stall of length D waited at least D - x. So at least (D - x) * rate samples are >= x, for every
     * x. A harness that stamps the actual send time (coordinated omission) records one slow message.
     */
    private static void assertEveryMessageScheduledDuringTheStallShowsIt(Histogram h) {
        for (long xMs : new long[]{10, 50, 100, 150, 190}) {
            long x = TimeUnit.MILLISECONDS.toNanos(xMs);
            long expected = (long) ((STALL_NS - x) / 1e9 * RATE) - 1; // messages scheduled in [start, start + D - x]
            long atLeastX = h.getCountBetweenValues(x, h.getMaxValue());
            assertTrue(atLeastX >= expected, "messages with latency >= " + xMs + " ms: " + atLeastX
                    + ", but " + expected + " were scheduled at least that long before the stall ended");
        }
    }

    @Test
    void aProducerStallShowsInEveryMessageScheduledDuringIt(@TempDir Path tmp) throws Exception {
        long warmup = 500;
        TestSubject s = new TestSubject(i -> {
            if (i == warmup + STALL_AT) {
                sleepNanos(STALL_NS);
            }
        }, i -> { });
        Histogram h = new Histogram(OpenLoopRun.HIGHEST_TRACKABLE_NS, 3);
        RunResult r = run(s, warmup, 5_000, h, tmp, false);
        assertEquals(5_000, r.received());
        // The stall happens inside send(i); the next message is late by the stall less one period (send(i) itself
        // started on time), plus however much the sleep overshot: at least STALL_NS - period, not STALL_NS.
        long periodNs = (long) (1e9 / RATE);
        assertTrue(r.maxLatenessNs() >= STALL_NS - periodNs, "the producer knows it fell behind by the stall: "
                + r.maxLatenessNs() + " ns");
        assertEveryMessageScheduledDuringTheStallShowsIt(h);
    }

    @Test
    void aConsumerStallShowsInEveryMessageScheduledDuringIt(@TempDir Path tmp) throws Exception {
        long warmup = 500;
        TestSubject s = new TestSubject(i -> { }, i -> {
            if (i == warmup + STALL_AT) {
                sleepNanos(STALL_NS);
            }
        });
        Histogram h = new Histogram(OpenLoopRun.HIGHEST_TRACKABLE_NS, 3);
        RunResult r = run(s, warmup, 5_000, h, tmp, false);
        assertEquals(5_000, r.received());
        assertEveryMessageScheduledDuringTheStallShowsIt(h);
    }

    /**
     * A consumer that reads at half the offered rate behind an unbounded queue: the producer keeps
     * its schedule and every message arrives within the drain time, yet the run did not keep the
     * rate, because the backlog grew without bound.
     */
    @Test
    void aSlowConsumerBehindAnUnboundedQueueLosesRateKept(@TempDir Path tmp) throws Exception {
        TestSubject s = new TestSubject(i -> { }, i -> {
            if (i % 10 == 0) {
                sleepNanos(TimeUnit.MILLISECONDS.toNanos(2)); // <= 10 messages per 2 ms: at most half the rate
            }
        });
        Histogram h = new Histogram(OpenLoopRun.HIGHEST_TRACKABLE_NS, 3);
        RunResult r = run(s, 0, 5_000, h, tmp, false);
        assertEquals(5_000, r.received(), "everything arrives in the end");
        assertTrue(r.receivedRate() < 0.6 * RATE, "received rate " + r.receivedRate());
        assertFalse(r.rateKept(), "a consumer at half the rate must not count as keeping it");
    }

    /** A full GC forced in the middle of a run: the messages it delayed are attributed to it. */
    @Test
    void messagesDelayedByAGcPauseAreAttributedToIt(@TempDir Path tmp) throws Exception {
        long warmup = 500;
        TestSubject s = new TestSubject(i -> {
            if (i == warmup + STALL_AT) {
                // a pause of the whole JVM, far above noise: a heap full of garbage first
                Object[] junk = new Object[1 << 20];
                for (int k = 0; k < junk.length; k++) {
                    junk[k] = new long[4];
                }
                System.gc();
            }
        }, i -> { });
        Histogram h = new Histogram(OpenLoopRun.HIGHEST_TRACKABLE_NS, 3);
        RunResult r = run(s, warmup, 5_000, h, tmp, true);
        Outliers.Summary o = r.outliers();
        assertTrue(o != null && o.overBound() > 0, "the GC delayed messages over 1 ms: " + o);
        long gc = o.causes().entrySet().stream().filter(e -> e.getKey().equals("GC pause"))
                .mapToLong(java.util.Map.Entry::getValue).sum();
        assertTrue(gc > 0, "some outliers attributed to the GC pause: " + o.causes());
    }

    /**
     * The attribution rule itself: messages whose windows overlap form one episode; each episode
     * gets the first overlapping cause, once per message in it; the rest is unattributed.
     */
    @Test
    void eachOutlierGetsTheCauseWhoseSpanOverlapsItsWindow() {
        Outliers.Recorder rec = new Outliers.Recorder(10);
        rec.record(1_000, 100);   // window [1000, 1100]: overlaps the GC span
        rec.record(1_050, 60);    // [1050, 1110]: starts inside the previous window: same episode
        rec.record(2_000, 50);    // [2000, 2050]: overlaps the CPU-wait span
        rec.record(5_000, 20);    // [5000, 5020]: nothing
        rec.record(6_000, 5);     // under the bound: not an outlier
        assertEquals(3, rec.kept, "three episodes");
        Outliers.Summary s = Outliers.attributeForTest(rec,
                new long[][]{{1_050, 1_200}, {1_990, 2_010}}, new String[]{"GC pause", "machine: producer waited for a CPU"});
        assertEquals(4, s.overBound());
        assertEquals(2L, s.causes().get("GC pause"));
        assertEquals(1L, s.causes().get("machine: producer waited for a CPU"));
        assertEquals(1L, s.causes().entrySet().stream().filter(e -> e.getKey().startsWith("unattributed"))
                .mapToLong(java.util.Map.Entry::getValue).sum());
    }
}
