package io.queueenterprise.replication.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Re-reads one file every {@code intervalMillis} on a daemon thread of its own (never the duty cycle: file reads block)
 * and hands its content to a {@link Listener} when it changed. Made for files Kubernetes mounts from a ConfigMap or
 * Secret: the kubelet replaces them by swapping the directory's {@code ..data} link, so the path is opened anew on every
 * read and the content compared, never a timestamp. The node's authorised clients and its peers' identity pins.
 */
public final class MountedFileWatcher implements AutoCloseable {
    /** What a watched file's owner does with it; called on the watching thread (or the caller of {@link #checkOnce}). */
    public interface Listener {
        /**
         * The file reads with content other than the content last taken.
         *
         * @return true: taken (not offered again until it changes); false: offered again at the next look (a refusal
         *         the owner wants to repeat, e.g. one whose cause may lie outside the content)
         */
        boolean changed(byte[] content);

        /**
         * The file cannot be read ({@link java.nio.file.NoSuchFileException}: absent).
         *
         * @param sinceReadable true at the first failure after the file last read (or ever), false while it goes on
         */
        void unreadable(IOException e, boolean sinceReadable);
    }

    private final Path file;
    private final long intervalMillis;
    private final Listener listener;
    private final Thread thread;
    private volatile boolean running = true;
    private byte[] lastContent;
    private boolean lastUnreadable;

    /**
     * @param taken the content already taken before watching (read at start by the owner), or null
     */
    public MountedFileWatcher(Path file, long intervalMillis, String threadName, Listener listener, byte[] taken) {
        this.file = file;
        this.intervalMillis = intervalMillis;
        this.listener = listener;
        this.lastContent = taken;
        this.thread = new Thread(this::run, threadName);
        this.thread.setDaemon(true);
    }

    /** Starts the watching thread; its first look comes one interval from now. */
    public void start() {
        thread.start();
    }

    private void run() {
        while (running) {
            try {
                Thread.sleep(intervalMillis);
            } catch (InterruptedException e) {
                return;
            }
            checkOnce();
        }
    }

    /** One look at the file, on the caller's thread. */
    public synchronized void checkOnce() {
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (IOException e) {
            listener.unreadable(e, !lastUnreadable);
            lastUnreadable = true;
            return;
        }
        lastUnreadable = false;
        if (Arrays.equals(content, lastContent)) {
            return;
        }
        if (listener.changed(content)) {
            lastContent = content;
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
