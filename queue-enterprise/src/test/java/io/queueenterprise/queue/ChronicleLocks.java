package io.queueenterprise.queue;

import net.openhft.chronicle.core.values.LongValue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

import java.nio.file.Path;

/**
 * Chronicle's cross-process write lock, seen from a test: who holds it, and recovery from a writer
 * that died holding it with a short timeout instead of Chronicle's default 10 s (per wait: the
 * lock, then the excerpt header the dead writer left open).
 */
final class ChronicleLocks {
    /** Chronicle's value of a free lock. */
    static final long UNLOCKED = Long.MIN_VALUE;
    private static final String WRITE_LOCK_KEY = "chronicle.write.lock";
    private static final long SHORT_TIMEOUT_MS = 200;

    private ChronicleLocks() {
    }

    /** The process id holding the queue's write lock, or {@link #UNLOCKED}. */
    static long writeLockHolder(Path queueDir) {
        // Read-only: opening for writing would already take over a dead process's lock.
        try (SingleChronicleQueue queue = SingleChronicleQueueBuilder.single(queueDir.toFile()).readOnly(true).build()) {
            LongValue lock = queue.metaStore().acquireValueFor(WRITE_LOCK_KEY);
            return lock.getVolatileValue();
        }
    }

    /**
     * Appends one metadata excerpt (invisible to tailers) through Chronicle with a short timeout: it
     * takes over a dead writer's lock and closes the excerpt header it left open, as the next
     * appender would after the full timeout.
     */
    static void recoverFromDeadWriter(Path queueDir) {
        try (SingleChronicleQueue queue = SingleChronicleQueueBuilder.single(queueDir.toFile()).timeoutMS(SHORT_TIMEOUT_MS).build();
             net.openhft.chronicle.queue.ExcerptAppender appender = queue.createAppender();
             DocumentContext dc = appender.writingDocument(true)) {
            dc.wire().write("recovered").text("after SIGKILL");
        }
    }
}
