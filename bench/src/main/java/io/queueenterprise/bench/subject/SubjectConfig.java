package io.queueenterprise.bench.subject;

import java.nio.file.Path;

/**
 * What a subject is opened with for one run.
 *
 * @param messageSize bytes per message (at least 8: the intended send time)
 * @param queueDir    a fresh, empty directory a persisting subject may use; the harness deletes
 *                    it after the run
 * @param capacity    capacity hint for bounded in-memory queues (a power of two)
 */
public record SubjectConfig(int messageSize, Path queueDir, int capacity) {
    public SubjectConfig {
        if (messageSize < Long.BYTES) {
            throw new IllegalArgumentException("messageSize must be >= 8, got " + messageSize);
        }
        if (Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("capacity must be a power of two, got " + capacity);
        }
    }
}
