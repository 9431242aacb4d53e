package io.queueenterprise.queue;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Keeps appends away from a full file system. Chronicle writes through memory maps of sparse files: when the
 * file system has no block left for a page being written, the kernel raises SIGBUS, the JVM turns it into an
 * {@code InternalError} in the middle of Chronicle's write, and the excerpt is left half written with the
 * queue's write lock held (measured here on a full tmpfs). So appends must stop before that, with a typed error
 * and nothing written.
 *
 * <p>How, without a system call per append: a background thread samples the file system's usable space every
 * {@value #SAMPLE_MILLIS} ms and publishes it with a generation number; each appender keeps a {@link Budget}
 * that subtracts what it wrote since the latest sample, and refuses an append that would leave less than the
 * reserve. Two volatile reads and some arithmetic per append; no allocation, no lock. Other processes' writes
 * show up at the next sample: the reserve must cover what they write in {@value #SAMPLE_MILLIS} ms.
 */
final class StorageGuard {
    static final long SAMPLE_MILLIS = 20;
    /** Per-excerpt bytes beyond the payload that an append may touch (Chronicle's header, envelope, index entry). */
    static final long EXCERPT_OVERHEAD = 64;
    private static final ScheduledExecutorService SAMPLER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "qe-storage-guard");
        t.setDaemon(true);
        return t;
    });

    private final Path dir;
    private final FileStore store;
    private final long reserveBytes;
    private volatile long usableBytes;
    private volatile long generation;
    private final ScheduledFuture<?> sampling;

    private StorageGuard(Path dir, FileStore store, long reserveBytes) {
        this.dir = dir;
        this.store = store;
        this.reserveBytes = reserveBytes;
        sample();
        this.sampling = SAMPLER.scheduleWithFixedDelay(this::sample, SAMPLE_MILLIS, SAMPLE_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Starts guarding the file system that holds {@code dir}, keeping {@code reserveBytes} free. */
    static StorageGuard start(Path dir, long reserveBytes) {
        try {
            return new StorageGuard(dir, Files.getFileStore(dir), reserveBytes);
        } catch (IOException e) { // the queue was just opened in dir: only a vanished directory gets here
            throw new java.io.UncheckedIOException("cannot find the file system of " + dir, e);
        }
    }

    private void sample() {
        try {
            usableBytes = store.getUsableSpace();
        } catch (IOException e) {
            usableBytes = 0; // unknown: refuse rather than risk a half-written excerpt
        }
        generation++; // single writer: the sampler thread
    }

    long reserveBytes() {
        return reserveBytes;
    }

    /** The usable bytes at the latest sample. */
    long usableBytes() {
        return usableBytes;
    }

    void close() {
        sampling.cancel(false);
    }

    /** One appender's view: what it wrote since the latest sample. Single-threaded, as its appender. */
    final class Budget {
        private long generationSeen = -1;
        private long spentSinceSample;

        /**
         * Accounts an append of {@code payloadBytes}, or throws and accounts nothing when it would leave less than
         * the reserve free.
         */
        void spend(String queueName, long payloadBytes) {
            long g = generation;
            if (g != generationSeen) {
                generationSeen = g;
                spentSinceSample = 0;
            }
            long cost = payloadBytes + EXCERPT_OVERHEAD;
            long left = usableBytes - spentSinceSample - cost;
            if (left < reserveBytes) {
                throw new StorageFullException(queueName, dir, Math.max(0, usableBytes - spentSinceSample), reserveBytes);
            }
            spentSinceSample += cost;
        }
    }
}
