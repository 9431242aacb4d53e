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
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The conditions the two instruments of the cross-check run under (issue 20: this harness's row
 * was 1,000x JLBH's at the median). Observed through a recording in-memory subject: which
 * instrument opened each run, and when. No assertion on any latency.
 */
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
}
