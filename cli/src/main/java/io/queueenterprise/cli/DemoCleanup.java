package io.queueenterprise.cli;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * What {@code qe demo} must undo however it ends: a normal return, an exception, or SIGINT/SIGTERM (Ctrl-C, a
 * terminal closed, {@code kill}), through one shutdown hook. Actions run once, newest first: the node processes
 * are stopped (by PID) before the directory holding their data, credentials and the demo's key is wiped and deleted.
 */
final class DemoCleanup implements AutoCloseable {
    private final Deque<AutoCloseable> actions = new ArrayDeque<>();
    private final Thread hook = new Thread(this::runAll, "qe-demo-cleanup");
    private volatile boolean shuttingDown;
    private boolean done;

    private DemoCleanup() {
    }

    /** A cleanup that also runs when the JVM is stopped by a signal. */
    static DemoCleanup install() {
        DemoCleanup cleanup = new DemoCleanup();
        Runtime.getRuntime().addShutdownHook(cleanup.hook);
        return cleanup;
    }

    /** {@code action} runs at the end, before every action registered earlier; returns it. */
    synchronized <T extends AutoCloseable> T register(T action) {
        if (done) { // the JVM is already stopping: undo at once what was just made
            closeQuietly(action);
        } else {
            actions.push(action);
        }
        return action;
    }

    /** Whether a signal is stopping the JVM: the demo's main thread then reports nothing (its work is being undone). */
    boolean shuttingDown() {
        return shuttingDown;
    }

    /** Runs every action now (the normal end) and takes the hook back. */
    @Override
    public void close() {
        runAll();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook has run or is running, and found nothing left to do
        }
    }

    private void runAll() {
        if (Thread.currentThread() == hook) {
            shuttingDown = true;
        }
        synchronized (this) {
            if (done) {
                return;
            }
            done = true;
            boolean interrupted = false;
            while (!actions.isEmpty()) {
                closeQuietly(actions.pop());
                interrupted |= Thread.interrupted(); // an interrupted wait must not cut the next action short
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void closeQuietly(AutoCloseable action) {
        try {
            action.close();
        } catch (Exception e) { // the rest must run all the same; say what could not be undone
            System.err.println("qe demo: cleanup: " + DemoFiles.describe(e));
        }
    }
}
