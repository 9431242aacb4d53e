package io.queueenterprise.bench.harness;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Outlier attribution: for every message whose latency exceeded the bound, what else happened in
 * its window {@code [intended, intended + latency]}, so a report can tell "the machine" from "our
 * code". Evidence, gathered off the hot threads:
 * <ul>
 *   <li>JFR {@code jdk.GCPhasePause} and {@code jdk.ExecuteVMOperation} (safepoints): the JVM stopped us;</li>
 *   <li>{@code /proc/self/task/<tid>/schedstat} run-queue wait of the producer and consumer threads,
 *       sampled every millisecond, and the spin gaps the producer and consumer themselves saw while
 *       idle: the machine took the core away;</li>
 *   <li>JFR {@code jdk.ExecutionSample} stacks of the producer and consumer threads (JFR samples
 *       without a safepoint, unlike {@code Thread.getStackTrace}): what our code was doing.</li>
 * </ul>
 * Each outlier gets the first cause in that order (counts add up to the outliers); stacks outside
 * every outlier window are discarded. Nothing here runs on the producer or consumer thread except
 * {@link Recorder#record} and {@link GapLog#record}, which write into preallocated arrays.
 */
public final class Outliers {

    /** Outlier episodes and gaps kept per run; beyond it they are counted but not attributed. */
    static final int CAPACITY = 1 << 16;
    static final String PRODUCER_THREAD = "qe-bench-producer";
    static final String CONSUMER_THREAD = "qe-bench-consumer";

    private Outliers() {
    }

    /**
     * Attribution of one run (or, summed, of a subject).
     *
     * @param overBound messages over the bound
     * @param causes    cause -> messages, largest first (at most {@link #TOP} entries, the rest in "other")
     */
    public record Summary(long overBound, Map<String, Long> causes) {
        public static final Summary NONE = new Summary(0, Map.of());

        /** Adds two summaries (per subject over its runs). */
        public Summary plus(Summary o) {
            Map<String, Long> sum = new HashMap<>(causes);
            o.causes.forEach((k, v) -> sum.merge(k, v, Long::sum));
            return new Summary(overBound + o.overBound, top(sum));
        }
    }

    static final int TOP = 8;

    static Map<String, Long> top(Map<String, Long> counts) {
        List<Map.Entry<String, Long>> entries = new ArrayList<>(counts.entrySet());
        entries.sort(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()));
        Map<String, Long> out = new LinkedHashMap<>();
        long other = 0;
        for (Map.Entry<String, Long> e : entries) {
            if (out.size() < TOP - 1 || entries.size() <= TOP) {
                out.put(e.getKey(), e.getValue());
            } else {
                other += e.getValue();
            }
        }
        if (other > 0) {
            out.merge("other", other, Long::sum);
        }
        return out;
    }

    /**
     * Consumer side: messages over the bound, as episodes. Messages arrive in intended order, and
     * a message whose window starts before the current episode's ends joins it (one stall delays a
     * whole run of messages: one episode, attributed once, weighted by its messages), so a run at
     * a saturated rate with every message late needs one slot, not one per message.
     */
    static final class Recorder {
        private final long boundNs;
        final long[] from = new long[CAPACITY];
        final long[] to = new long[CAPACITY];
        final long[] messages = new long[CAPACITY];
        int kept;
        long total;

        Recorder(long boundNs) {
            this.boundNs = boundNs;
        }

        void record(long intendedNs, long latencyNs) {
            if (latencyNs <= boundNs) {
                return;
            }
            total++;
            long end = intendedNs + latencyNs;
            int last = kept - 1;
            if (last >= 0 && intendedNs <= to[last]) {
                messages[last]++;
                if (end > to[last]) {
                    to[last] = end;
                }
            } else if (kept < CAPACITY) {
                from[kept] = intendedNs;
                to[kept] = end;
                messages[kept] = 1;
                kept++;
            }
        }
    }

    /** Gaps an idle, spinning thread saw between two reads of the clock (the core was taken away). */
    static final class GapLog {
        private final long thresholdNs;
        final long[] start = new long[CAPACITY];
        final long[] length = new long[CAPACITY];
        int kept;

        GapLog(long thresholdNs) {
            this.thresholdNs = thresholdNs;
        }

        void record(long startNs, long lengthNs) {
            if (lengthNs > thresholdNs && kept < CAPACITY) {
                start[kept] = startNs;
                length[kept] = lengthNs;
                kept++;
            }
        }
    }

    /** Threshold of a gap worth recording: a quarter of the bound, within [2 us, 100 us]. */
    static long gapThresholdNs(long boundNs) {
        return Math.max(2_000, Math.min(100_000, boundNs / 4));
    }

    /** An interval of evidence with its cause. */
    private record Span(long fromNs, long toNs, String cause) {
    }

    /**
     * Everything recorded around one run: started before the producer and consumer threads,
     * {@link #finish} after they have stopped.
     */
    static final class Capture {
        private final Recording recording;
        private final SchedSampler sched;
        private final long epochOffsetNs;

        Capture() {
            Instant now = Instant.now();
            long nano = System.nanoTime();
            epochOffsetNs = now.getEpochSecond() * 1_000_000_000L + now.getNano() - nano;
            recording = new Recording();
            recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(1));
            recording.enable("jdk.GCPhasePause").withThreshold(Duration.ZERO);
            recording.enable("jdk.ExecuteVMOperation").withThreshold(Duration.ZERO);
            recording.setToDisk(true);
            recording.start();
            sched = new SchedSampler();
        }

        /** The producer and consumer threads call this once to name their kernel thread id. */
        void register(String role, int tid) {
            sched.register(role, tid);
        }

        Summary finish(Recorder outliers, GapLog producerGaps, GapLog consumerGaps, Path scratch) throws IOException {
            sched.stop();
            recording.stop();
            List<Span> spans = new ArrayList<>();
            List<Span> stacks = new ArrayList<>();
            Path file = scratch.resolve("attribution.jfr");
            try {
                recording.dump(file);
                for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
                    String type = e.getEventType().getName();
                    long from = toNano(e.getStartTime());
                    switch (type) {
                        case "jdk.GCPhasePause" -> spans.add(new Span(from, toNano(e.getEndTime()), "GC pause"));
                        case "jdk.ExecuteVMOperation" -> {
                            if (e.hasField("safepoint") && e.getBoolean("safepoint")) {
                                spans.add(new Span(from, toNano(e.getEndTime()),
                                        "safepoint: " + e.getString("operation")));
                            }
                        }
                        case "jdk.ExecutionSample" -> {
                            RecordedThread t = e.getThread("sampledThread");
                            String name = t == null ? null : t.getJavaName();
                            String role = PRODUCER_THREAD.equals(name) ? "producer"
                                    : CONSUMER_THREAD.equals(name) ? "consumer" : null;
                            if (role != null && e.getStackTrace() != null && !e.getStackTrace().getFrames().isEmpty()) {
                                stacks.add(new Span(from, from, "code: " + role + " in " + frame(e.getStackTrace().getFrames())));
                            }
                        }
                        default -> { }
                    }
                }
            } finally {
                recording.close();
                Files.deleteIfExists(file);
            }
            List<Span> machine = new ArrayList<>(sched.spans());
            addGaps(machine, producerGaps, "machine: producer core taken away while idle");
            addGaps(machine, consumerGaps, "machine: consumer core taken away while idle");
            return attribute(outliers, List.of(sorted(spans), sorted(machine), sorted(stacks)));
        }

        private long toNano(Instant t) {
            return t.getEpochSecond() * 1_000_000_000L + t.getNano() - epochOffsetNs;
        }
    }

    private static void addGaps(List<Span> into, GapLog gaps, String cause) {
        if (gaps == null) {
            return;
        }
        for (int i = 0; i < gaps.kept; i++) {
            into.add(new Span(gaps.start[i], gaps.start[i] + gaps.length[i], cause));
        }
    }

    private static List<Span> sorted(List<Span> spans) {
        spans.sort(Comparator.comparingLong(Span::fromNs));
        return spans;
    }

    /** The first frame that is not the JDK's plumbing, as Class.method (the whole top frame if all are). */
    private static String frame(List<RecordedFrame> frames) {
        for (RecordedFrame f : frames) {
            String type = f.getMethod().getType().getName();
            if (!type.startsWith("java.") && !type.startsWith("jdk.") && !type.startsWith("sun.")) {
                return simple(type) + "." + f.getMethod().getName();
            }
        }
        RecordedFrame f = frames.get(0);
        return simple(f.getMethod().getType().getName()) + "." + f.getMethod().getName();
    }

    private static String simple(String type) {
        return type.substring(type.lastIndexOf('.') + 1);
    }

    /**
     * Gives every recorded episode the first cause (in evidence-class order) whose span overlaps its
     * window, counted once per message in it; episodes beyond {@link #CAPACITY} are counted as
     * "not attributed (log full)".
     */
    static Summary attribute(Recorder outliers, List<List<Span>> evidenceClasses) {
        Map<String, Long> causes = new HashMap<>();
        long attributed = 0;
        for (int i = 0; i < outliers.kept; i++) {
            long from = outliers.from[i];
            long to = outliers.to[i];
            attributed += outliers.messages[i];
            String cause = null;
            for (List<Span> spans : evidenceClasses) {
                cause = firstOverlap(spans, from, to);
                if (cause != null) {
                    break;
                }
            }
            causes.merge(cause == null ? "unattributed (no GC, safepoint, lost CPU or sample in the window)" : cause,
                    outliers.messages[i], Long::sum);
        }
        if (outliers.total > attributed) {
            causes.merge("not attributed (outlier log full)", outliers.total - attributed, Long::sum);
        }
        return new Summary(outliers.total, top(causes));
    }

    /** Spans sorted by start; spans are short, so scanning back a bounded way from the window's end suffices. */
    private static String firstOverlap(List<Span> spans, long from, long to) {
        int lo = 0;
        int hi = spans.size();
        while (lo < hi) { // first span starting after 'to'
            int mid = (lo + hi) >>> 1;
            if (spans.get(mid).fromNs() <= to) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        for (int i = lo - 1; i >= 0 && lo - i <= 256; i--) {
            Span s = spans.get(i);
            if (s.toNs() >= from) {
                return s.cause();
            }
        }
        return null;
    }

    static Summary attributeForTest(Recorder outliers, long[][] spans, String[] causes) {
        List<Span> list = new ArrayList<>();
        for (int i = 0; i < spans.length; i++) {
            list.add(new Span(spans[i][0], spans[i][1], causes[i]));
        }
        return attribute(outliers, List.of(sorted(list)));
    }

    /**
     * Every millisecond, the run-queue wait (second field of /proc/self/task/TID/schedstat) of the
     * producer and consumer threads: time they were runnable but had no CPU. An increase becomes a
     * span over the last tick.
     */
    private static final class SchedSampler implements Runnable {
        private final Map<String, Integer> tids = new java.util.concurrent.ConcurrentHashMap<>();
        private final List<Span> spans = new ArrayList<>();
        private final Thread thread = new Thread(this, "qe-bench-schedstat");
        private volatile boolean running = true;

        SchedSampler() {
            thread.setDaemon(true);
            thread.start();
        }

        void register(String role, int tid) {
            if (tid > 0) {
                tids.put(role, tid);
            }
        }

        @Override
        public void run() {
            Map<String, FileChannel> files = new HashMap<>();
            Map<String, Long> last = new HashMap<>();
            ByteBuffer buf = ByteBuffer.allocate(128);
            long lastTick = System.nanoTime();
            try {
                while (running) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                    long now = System.nanoTime();
                    for (Map.Entry<String, Integer> e : tids.entrySet()) {
                        String role = e.getKey();
                        FileChannel ch = files.get(role);
                        if (ch == null) {
                            Path p = Path.of("/proc/self/task/" + e.getValue() + "/schedstat");
                            if (!Files.isReadable(p)) {
                                continue;
                            }
                            ch = FileChannel.open(p, StandardOpenOption.READ);
                            files.put(role, ch);
                        }
                        buf.clear();
                        ch.read(buf, 0);
                        String[] f = new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII).trim().split(" ");
                        if (f.length < 2) {
                            continue;
                        }
                        long wait = Long.parseLong(f[1]);
                        Long before = last.put(role, wait);
                        if (before != null && wait > before) {
                            synchronized (spans) {
                                spans.add(new Span(lastTick, now, "machine: " + role + " waited for a CPU"));
                            }
                        }
                    }
                    lastTick = now;
                }
            } catch (IOException | RuntimeException ignored) {
                // no schedstat (not Linux, or the thread ended): this evidence is simply absent
            } finally {
                for (FileChannel ch : files.values()) {
                    try {
                        ch.close();
                    } catch (IOException ignored) {
                        // closing a /proc file
                    }
                }
            }
        }

        void stop() {
            running = false;
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        List<Span> spans() {
            synchronized (spans) {
                return new ArrayList<>(spans);
            }
        }
    }
}
