package io.queueenterprise.bench.subject;

import java.nio.file.Path;

/**
 * What a subject is opened with for one run. A persisting subject keeps everything under
 * {@code runDir}, so a consumer in another process can open the same subject from the same config
 * (the harness's {@code --consumer-process} mode).
 *
 * @param messageSize bytes per message (at least 8: the intended send time)
 * @param runDir      a fresh directory for this run, deleted by the harness afterwards
 * @param capacity    capacity hint for bounded in-memory queues (a power of two)
 */
public record SubjectConfig(int messageSize, Path runDir, int capacity) {
    public SubjectConfig {
        if (messageSize < Long.BYTES) {
            throw new IllegalArgumentException("messageSize must be >= 8, got " + messageSize);
        }
        if (Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("capacity must be a power of two, got " + capacity);
        }
    }

    /** Where a persisting subject's queue files go. */
    public Path queueDir() {
        return runDir.resolve("queue");
    }

    /** Where a subject keeps secrets it shares with a consumer process (owner-only files). */
    public Path secretsDir() {
        return runDir.resolve("secrets");
    }
}
