package io.queueenterprise.queue;

import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The queue's last index, recomputed in the background and published with one volatile write, so that a
 * tailer that finds nothing to read can tell "the end" from "a damaged excerpt hides the rest" with one
 * volatile read. Why in the background: Chronicle's {@code lastIndex()} scans (a throw-away loop measured about
 * a millisecond at 100,000 excerpts here, more as a cycle grows); a consumer polling at the end must not pay
 * that per poll.
 * The next refresh waits at least {@value #REFRESH_MILLIS} ms and at least {@value #IDLE_FACTOR} times
 * as long as the last one took, so the watch never takes more than about 2 % of one core.
 */
final class LastIndexWatch {
    static final long REFRESH_MILLIS = 200;
    static final long IDLE_FACTOR = 50;
    private static final ScheduledExecutorService SCHEDULER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "qe-last-index-watch");
        t.setDaemon(true);
        return t;
    });

    private final SingleChronicleQueue chronicle;
    /** Held for each refresh and by close(): the queue is never closed under a refresh running in the background. */
    private final Object refreshing = new Object();
    private volatile long lastIndex = -1;
    private int users;
    private volatile boolean closed; // volatile, not locked: refresh() must not take this monitor (lock order)
    private ScheduledFuture<?> task;

    LastIndexWatch(SingleChronicleQueue chronicle) {
        this.chronicle = chronicle;
    }

    /** A tailer starts using the watch: the first one computes the last index at once and starts refreshing. */
    synchronized void acquire() {
        if (users++ == 0 && !closed) {
            scheduleNext(refreshTimed());
        }
    }

    synchronized void release() {
        if (users > 0 && --users == 0 && task != null) {
            task.cancel(false);
            task = null;
        }
    }

    /**
     * Stops refreshing and waits for a refresh in progress, so that the queue can be closed after it: a
     * {@code lastIndex()} racing Chronicle's close can leave a file behind in a directory being deleted.
     */
    void close() {
        synchronized (this) {
            closed = true;
            if (task != null) {
                task.cancel(false);
                task = null;
            }
        }
        synchronized (refreshing) {
            lastIndex = -1;
        }
    }

    private synchronized void scheduleNext(long lastTookNanos) {
        if (users == 0 || closed) {
            return;
        }
        long delayNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(REFRESH_MILLIS), lastTookNanos * IDLE_FACTOR);
        task = SCHEDULER.schedule(() -> scheduleNext(refreshTimed()), delayNanos, TimeUnit.NANOSECONDS);
    }

    private long refreshTimed() {
        long start = System.nanoTime();
        refresh();
        return System.nanoTime() - start;
    }

    /** The last index as of the latest refresh; every excerpt up to it was complete then. -1 when unknown. */
    long lastIndex() {
        return lastIndex;
    }

    void refresh() {
        synchronized (refreshing) {
            try {
                if (!closed && !chronicle.isClosed()) {
                    lastIndex = chronicle.lastIndex();
                }
            } catch (RuntimeException | InternalError | AssertionError e) { // Chronicle asserts on a truncated file (-ea)
                // A damaged queue: keep the last value; the tailers report damage themselves.
            }
        }
    }

}
