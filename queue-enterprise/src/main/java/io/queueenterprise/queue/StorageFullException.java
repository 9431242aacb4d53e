package io.queueenterprise.queue;

import java.nio.file.Path;

/**
 * An append was refused because the queue's file system is nearly full: nothing was written, the queue is
 * intact and takes appends again once space is freed (or the volume grown). Why refuse early: past this point
 * Chronicle's memory-mapped write would fault half way (SIGBUS), leaving a half-written excerpt and its write
 * lock held.
 */
public final class StorageFullException extends ExcerptException {
    private static final long serialVersionUID = 1L;
    private final long usableBytes;
    private final long reserveBytes;

    StorageFullException(String queueName, Path dir, long usableBytes, long reserveBytes) {
        super(queueName, UNKNOWN_INDEX, "append refused, nothing written: " + mib(usableBytes) + " usable on the file system of "
                + dir + ", below the reserve of " + mib(reserveBytes) + " (EnterpriseQueue.Builder.minFreeSpace; on a replication node twice the block size);"
                + " free space or grow the volume", null);
        this.usableBytes = usableBytes;
        this.reserveBytes = reserveBytes;
    }

    private static String mib(long bytes) {
        return String.format("%.1f MiB", bytes / (1024.0 * 1024.0));
    }

    /** Usable bytes as last sampled, less what this appender wrote since. */
    public long usableBytes() {
        return usableBytes;
    }

    /** The free space the queue keeps. */
    public long reserveBytes() {
        return reserveBytes;
    }
}
