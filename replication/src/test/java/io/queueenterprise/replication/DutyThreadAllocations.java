package io.queueenterprise.replication;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Exact allocation of named threads across a window: {@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}
 * (the JVM's per-thread allocation counter, every TLAB and outside-TLAB byte) read for each thread before and after.
 * When a thread allocated, the window is run again under a JFR recording of allocation samples with stacks, to say
 * where (the diagnostic of a failure, never what decides it).
 */
final class DutyThreadAllocations {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private final List<String> names = new ArrayList<>();
    private final long[] ids;
    private long elapsedNanos;

    /** The live threads named exactly {@code threadNames}; fails naming the ones absent (and the qe- threads alive). */
    DutyThreadAllocations(List<String> threadNames) {
        Map<String, Long> byName = new LinkedHashMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            byName.put(t.getName(), t.getId());
        }
        ids = new long[threadNames.size()];
        for (int i = 0; i < ids.length; i++) {
            Long id = byName.get(threadNames.get(i));
            if (id == null) {
                throw new AssertionError("no live thread named " + threadNames.get(i) + "; the qe- threads: "
                        + byName.keySet().stream().filter(n -> n.startsWith("qe-")).sorted().toList());
            }
            ids[i] = id;
            names.add(threadNames.get(i));
        }
        if (!THREADS.isThreadAllocatedMemorySupported() || !THREADS.isThreadAllocatedMemoryEnabled()) {
            throw new AssertionError("this JVM does not count each thread's allocated bytes");
        }
    }

    /**
     * Bytes per second of window a thread may allocate besides nothing: timers and housekeeping, not per excerpt.
     * Seen (exact counters): 0 to 360 bytes on each node's duty thread over 0.5 to 1.6 s windows of the local stream;
     * in the remote test 1.2 KB (leader with its gateway), 35 KB (follower: the same over windows of 4 to 8.5 s, so
     * not time-based; source not found) and 2 to 20 KB (client). Too little for JFR's samples to say where. What it must catch: one 16-byte object per
     * excerpt is 80 KB/s at the slowest rate seen here (5,000 a second), per ACK frame of the remote test 16 KB/s.
     */
    static final long HOUSEKEEPING_BYTES_PER_SECOND = 8 * 1024;

    /**
     * Whether Aeron's transport pollers take their selector path ({@code org.agrona.transport.iteration.threshold}
     * -1, set by this module's allocation execution): with Aeron's default they iterate an {@code ArrayList} per poll,
     * and C2 removes that iterator in some compilations and not in others (0 bytes in one run, 3 MB per 200,000
     * excerpts in the next; JFR: {@code ControlTransportPoller.pollTransports}, {@code DataTransportPoller.pollTransports}).
     */
    static boolean aeronPollsWithoutIterators() {
        return org.agrona.nio.TransportPoller.ITERATION_THRESHOLD < 0;
    }

    /** What a thread may allocate in a window of {@code seconds}: {@link #HOUSEKEEPING_BYTES_PER_SECOND}, at least 1 s. */
    static long housekeepingAllowance(double seconds) {
        return (long) (HOUSEKEEPING_BYTES_PER_SECOND * Math.max(1.0, seconds));
    }

    /**
     * Bytes a thread of the remote test may allocate once per window, besides housekeeping: its follower allocated
     * about 35 KB per window whatever the window's length (4 to 8.5 s; source not found), so a machine that runs the
     * window in under 4.4 s would fail on housekeeping's allowance alone. What must still be caught is far above it:
     * one 16-byte object per append is 3.2 MB over the window, per APPEND_ACK frame about 137 KB.
     */
    static final long REMOTE_WINDOW_ONE_OFF_BYTES = 48 * 1024;

    /** A stretch of steady state: what it does is measured. */
    interface Window {
        void run() throws Exception;
    }

    /** Runs {@code window}, reading each thread's counter before and after (nothing else runs meanwhile: exact). */
    Map<String, Long> measure(Window window) throws Exception {
        long[] before = THREADS.getThreadAllocatedBytes(ids);
        long start = System.nanoTime();
        window.run();
        long[] after = THREADS.getThreadAllocatedBytes(ids);
        elapsedNanos = System.nanoTime() - start;
        Map<String, Long> bytes = new LinkedHashMap<>();
        for (int i = 0; i < ids.length; i++) {
            bytes.put(names.get(i), after[i] < 0 || before[i] < 0 ? -1 : after[i] - before[i]);
        }
        return bytes;
    }

    double elapsedSeconds() {
        return elapsedNanos / 1e9;
    }

    /**
     * Runs {@code window} again under a JFR recording of allocation samples with stacks, and says where the named
     * threads and the calling one allocated: the heaviest stacks, top frames each (weights estimate bytes). The
     * diagnostic of a failed {@link #measure}, kept out of the measured window so that it cannot perturb it.
     */
    String whereAllocated(Window window, Path file) throws Exception {
        try (Recording recording = new Recording()) {
            recording.enable("jdk.ObjectAllocationSample").with("throttle", "10000/s").withStackTrace();
            // every TLAB refill and every object too large for one, with its own size: small allocators show here
            recording.enable("jdk.ObjectAllocationInNewTLAB").withStackTrace();
            recording.enable("jdk.ObjectAllocationOutsideTLAB").withStackTrace();
            recording.start();
            try {
                window.run();
            } catch (Exception | AssertionError e) { // a stall of this machine, say: the measurement stands, the stacks so far are printed
                System.out.println("the diagnostic run of the window failed: " + e);
            }
            recording.stop();
            recording.dump(file);
        }
        return whereAllocated(file, 12, 8);
    }

    /**
     * Where the named threads allocated in the window, from JFR's samples (weights estimate bytes): the heaviest
     * {@code limit} stacks, top {@code depth} frames each. A diagnostic only: samples are coarse.
     */
    private String whereAllocated(Path file, int limit, int depth) throws IOException {
        String caller = Thread.currentThread().getName();
        Map<String, Long> stacks = new TreeMap<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            String thread = e.getThread("eventThread") == null ? null : e.getThread("eventThread").getJavaName();
            if (thread == null || !(names.contains(thread) || thread.equals(caller))) {
                continue;
            }
            List<RecordedFrame> frames = e.getStackTrace() == null ? List.of() : e.getStackTrace().getFrames();
            StringBuilder where = new StringBuilder(thread).append(' ').append(e.getClass("objectClass").getName());
            for (int i = 0; i < Math.min(depth, frames.size()); i++) {
                RecordedFrame f = frames.get(i);
                where.append("\n      <- ").append(f.getMethod().getType().getName()).append('.')
                        .append(f.getMethod().getName()).append(':').append(f.getLineNumber());
            }
            String event = e.getEventType().getName();
            long bytes = event.equals("jdk.ObjectAllocationSample") ? e.getLong("weight") : e.getLong("allocationSize");
            stacks.merge((event.equals("jdk.ObjectAllocationSample") ? "" : event.substring(4) + " ") + where, bytes, Long::sum);
        }
        StringBuilder report = new StringBuilder("JFR allocation samples (estimated bytes) and TLAB events (object"
                + " sizes) on the measured threads:");
        stacks.entrySet().stream().sorted((a, b) -> Long.compare(b.getValue(), a.getValue())).limit(limit)
                .forEach(en -> report.append("\n  ").append(en.getValue()).append(' ').append(en.getKey()));
        if (stacks.isEmpty()) {
            report.append(" none sampled");
        }
        return report.toString();
    }

}
