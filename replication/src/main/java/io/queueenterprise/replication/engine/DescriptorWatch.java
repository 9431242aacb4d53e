package io.queueenterprise.replication.engine;

import io.queueenterprise.queue.QueueDescriptor;

import java.io.File;
import java.nio.file.Path;

/**
 * Tells a leader when a queue's descriptor file may have changed, without reading it: every writer replaces the
 * file by an atomic rename, so a change shows in its modification stamp or length. {@link File#lastModified()} and
 * {@link File#length()} are two {@code stat} calls that allocate nothing, unlike reading the file (which the leader
 * did ten times a second per queue). The stamp has the file system's granularity (milliseconds or a clock tick): a
 * rewrite of the same length within it would keep both, so a file younger than {@link #RECENT_MILLIS} is reported
 * as possibly changed on every check and its bytes compared, which costs a read only in the second after a change.
 * Duty-cycle thread only.
 */
final class DescriptorWatch {
    static final long RECENT_MILLIS = 1_000;

    private final File file;
    private long stamp = Long.MIN_VALUE;
    private long length = -1;

    DescriptorWatch(Path queueDirectory) {
        this.file = queueDirectory.resolve(QueueDescriptor.FILE_NAME).toFile();
    }

    /** Whether the descriptor may differ from when this was last asked; false means it certainly does not. */
    boolean mayHaveChanged(long nowMillis) {
        long currentStamp = file.lastModified(); // 0 when absent
        long currentLength = file.length();
        boolean moved = currentStamp != stamp || currentLength != length;
        stamp = currentStamp;
        length = currentLength;
        return moved || (currentStamp != 0 && nowMillis - currentStamp < RECENT_MILLIS);
    }
}
