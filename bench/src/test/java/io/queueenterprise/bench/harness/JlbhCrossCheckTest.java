package io.queueenterprise.bench.harness;

import io.queueenterprise.bench.subject.Subject;
import io.queueenterprise.bench.subject.SubjectConfig;
import io.queueenterprise.bench.subject.SubjectFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The conditions the two instruments of the cross-check run under (issue 20: this harness's row
 * was 1,000x JLBH's at the median). Observed through a recording in-memory subject: which
 * instrument opened each run, and when. No assertion on any latency.
 */
@org.junit.jupiter.api.Tag("slow")
@org.junit.jupiter.api.Tag("unit")
class JlbhCrossCheckTest {

    /** One subject opened: by which instrument (the thread that took its producer side) and when. */
    private record Opened(String byThread, long openNs, long[] closeNs) {
    }

    /** An unbounded in-memory queue that remembers every time it was opened. */
    private static final class RecordingFactory implements SubjectFactory {
        final List<Opened> opened = new ArrayList<>();

        @Override public String name() {
            return "recording";
        }

        @Override public String description() {
            return "in-memory test subject";
        }

        @Override public Role role() {
            return Role.PEER;
        }

        @Override public boolean persists() {
            return false;
        }

        @Override public synchronized Subject open(SubjectConfig config) {
            long[] closed = {0};
            String[] by = {null};
            ConcurrentLinkedQueue<Long> queue = new ConcurrentLinkedQueue<>();
            long openNs = System.nanoTime();
            return new Subject() {
                @Override public Producer producer() {
                    by[0] = Thread.currentThread().getName();
                    synchronized (RecordingFactory.this) {
                        opened.add(new Opened(by[0], openNs, closed));
                    }
                    return queue::offer;
                }

                @Override public Consumer consumer() {
                    return () -> {
                        Long m = queue.poll();
                        return m == null ? NONE : m;
                    };
                }

                @Override public void close() {
                    closed[0] = System.nanoTime();
                }
            };
        }
    }

    @Test
    @Timeout(120)
    void bothInstrumentsRunWarmQuiescedAndWithoutAttribution(@TempDir Path tmp) throws Exception {
        BenchConfig c = BenchConfig.quick();
        c.queueRoot = tmp.toString();
        c.durationSeconds = 0.01;   // JLBH runs at least one second whatever this says
        c.runWarmupSeconds = 0.01;
        c.warmupSeconds = 0.1;
        c.warmupRate = 2_000;
        c.runs = 1;                 // the cross-check still runs MIN_RUNS of each
        c.attribution = true;       // as the sweep has it: the cross-check must turn it off for itself
        RecordingFactory f = new RecordingFactory();

        JlbhCrossCheck.Result r = JlbhCrossCheck.run(f, 40, 2_000, c, new Pinning(false));

        List<String> order = f.opened.stream().map(o -> o.byThread().equals("qe-bench-jlbh") ? "jlbh" : "harness")
                .toList();
        assertEquals(JlbhCrossCheck.MIN_RUNS, r.harness().runs().size(), "recorded harness runs: " + order);
        assertEquals(JlbhCrossCheck.MIN_RUNS, r.jlbhRunsNs().size(), "JLBH runs: " + order);
        // this JVM runs no subject otherwise: its first harness run (cold loops, first JFR start) is not recorded
        assertEquals("harness", order.get(0), "the harness warms up in this JVM before anything is recorded: " + order);
        assertEquals(JlbhCrossCheck.MIN_RUNS + 1, order.stream().filter("harness"::equals).count(), order.toString());
        // JLBH samples no stacks: nor may the harness row (JFR every 1 ms and a schedstat thread on 2 cores)
        for (RunResult run : r.harness().runs()) {
            assertNull(run.outliers(), "no attribution in the cross-check's harness runs");
        }
        assertTrue(c.attribution, "the bench's own configuration is left as it was");
        // every recorded run, of either instrument, starts after a quiesce of at least quiesceSeconds
        long quiesceNs = (long) (c.quiesceSeconds * 1e9);
        for (int i = 1; i < f.opened.size(); i++) {
            long gap = f.opened.get(i).openNs() - f.opened.get(i - 1).closeNs()[0];
            assertTrue(gap >= quiesceNs, "run " + i + " (" + order.get(i) + ") opened "
                    + TimeUnit.NANOSECONDS.toMillis(gap) + " ms after the previous one closed: " + order);
        }
        // the verdict is there, with JLBH's runs judged by the harness's rate rule
        assertEquals(r.jlbhRunsNs().size(), r.jlbhRunsRateKept().size());
        assertNotNull(r.verdict());
    }

    /** JLBH's runs are judged by the harness's rate rule, on the part after JLBH's warm-up iterations. */
    @Test
    void aJlbhRunKeepsItsRateOnlyIfItsMeasuredPartDid() {
        long period = 100_000; // 10 K msg/s
        long iterations = 1_000;
        long warmUp = 500;
        // on schedule: warm-up sent in a burst at t=0, then one every period, each received 2 us later
        var onTime = new JlbhCrossCheck.MeasuredPart(warmUp);
        feed(onTime, warmUp, iterations, period, 0, 2_000);
        assertTrue(onTime.rates(10_000, iterations).kept(), onTime.rates(10_000, iterations).toString());
        // the consumer fell 50 ms behind by the end (a growing backlog): not kept
        var backlog = new JlbhCrossCheck.MeasuredPart(warmUp);
        feed(backlog, warmUp, iterations, period, 0, 50_000_000);
        assertFalse(backlog.rates(10_000, iterations).kept());
        // JLBH sent late: its sends ended 50 ms after the last intended time
        var late = new JlbhCrossCheck.MeasuredPart(warmUp);
        feed(late, warmUp, iterations, period, 50_000_000, 2_000);
        assertFalse(late.rates(10_000, iterations).kept());
        // a message lost in the measured part
        var lost = new JlbhCrossCheck.MeasuredPart(warmUp);
        feed(lost, warmUp, iterations - 1, period, 0, 2_000);
        assertFalse(lost.rates(10_000, iterations).kept());
    }

    /**
     * Warm-up messages at t = 0, then {@code measured} at one per period from t = 1 s; the last send
     * done {@code lastSendLateNs} late and the last receipt {@code lastReceiveLateNs} after it.
     */
    private static void feed(JlbhCrossCheck.MeasuredPart m, long warmUp, long measured, long period,
                             long lastSendLateNs, long lastReceiveLateNs) {
        for (long i = 0; i < warmUp; i++) {
            m.sent(0, 10);
            m.received(20);
        }
        long start = 1_000_000_000L;
        for (long i = 0; i < measured; i++) {
            long intended = start + i * period;
            boolean last = i == measured - 1;
            long done = intended + 500 + (last ? lastSendLateNs : 0);
            m.sent(intended, done);
            m.received(last ? done + lastReceiveLateNs : intended + 2_000);
        }
    }
}
