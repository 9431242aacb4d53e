package io.queueenterprise.queue;

import net.openhft.chronicle.core.values.LongValue;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * How far a majority of replicas holds a node-hosted queue in {@code QUORUM} or {@code REPLICATED_READS} mode: the
 * <b>acknowledged index</b>, a watermark (every excerpt at or below it is held by a majority, the leader included).
 * It is the quorum index the replication node publishes in the queue's mapped metadata, so reading it is one
 * volatile read, in any process on the machine.
 *
 * <p>With a {@linkplain EnterpriseQueue#createPipelinedAppender() pipelined appender}, a write returns its index as
 * soon as the excerpt is in the local queue; the application keeps writing and learns later that a majority holds
 * it: {@link #acknowledgedIndex()} reads the watermark, {@link #awaitAcknowledged(long, Duration)} waits for it,
 * and a {@link Watch} calls a handler each time it moved. Indexes only grow (across roll cycles too), so an index
 * is acknowledged exactly when it is at or below the watermark.
 *
 * <p>Thread-safe: any number of threads may read and await at once. A {@link Watch} belongs to one thread.
 * Nothing here allocates after construction (an {@link AckTimeoutException} does, on the failure path only).
 */
public final class QueueAcknowledgements {
    /** Spin this long before yielding, then park: a quorum ack on loopback takes tens of microseconds. */
    private static final long SPIN_NANOS = 50_000;
    private static final long YIELD_NANOS = 1_000_000;
    private static final long PARK_NANOS = 50_000;

    private final String queueName;
    private final LongValue quorumIndex;

    QueueAcknowledgements(String queueName, LongValue quorumIndex) {
        this.queueName = queueName;
        this.quorumIndex = quorumIndex;
    }

    /** The highest index a majority of replicas holds (every lower one too); -1 before the first. Never waits. */
    public long acknowledgedIndex() {
        return quorumIndex.getVolatileValue();
    }

    /** Whether a majority holds the excerpt at {@code index}. Never waits. */
    public boolean isAcknowledged(long index) {
        return quorumIndex.getVolatileValue() >= index;
    }

    /**
     * Waits until a majority holds the excerpt at {@code index} (spinning briefly, then yielding, then parking for
     * 50 µs at a time) and returns the acknowledged index then, at or above {@code index}.
     *
     * @throws AckTimeoutException when {@code timeout} passed first: the excerpt is written locally and may still
     *                             become durable, or be quarantined if the node loses its leadership first
     */
    public long awaitAcknowledged(long index, Duration timeout) {
        long acknowledged = quorumIndex.getVolatileValue();
        if (acknowledged >= index) {
            return acknowledged;
        }
        long timeoutNanos = timeout.toNanos();
        long start = System.nanoTime();
        while ((acknowledged = quorumIndex.getVolatileValue()) < index) {
            long waited = System.nanoTime() - start;
            if (waited > timeoutNanos) {
                throw new AckTimeoutException(queueName, index, timeout, acknowledged);
            }
            if (waited < SPIN_NANOS) {
                Thread.onSpinWait();
            } else if (waited < YIELD_NANOS) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(PARK_NANOS);
            }
        }
        return acknowledged;
    }

    /** A new watch, starting from the acknowledged index now (its first poll reports only a later one). */
    public Watch newWatch() {
        return new Watch(this);
    }

    /** Told the new acknowledged index by {@link Watch#poll}. */
    @FunctionalInterface
    public interface Handler {
        /** A majority now holds every excerpt up to {@code acknowledgedIndex} (higher than the last one reported). */
        void onAcknowledged(long acknowledgedIndex);
    }

    /**
     * Tells its owner when the acknowledged index moved, without waiting and without allocating: a duty cycle
     * calls {@link #poll} among its other work. Belongs to one thread (make one per thread).
     */
    public static final class Watch {
        private final QueueAcknowledgements acknowledgements;
        private long reported;

        private Watch(QueueAcknowledgements acknowledgements) {
            this.acknowledgements = acknowledgements;
            this.reported = acknowledgements.acknowledgedIndex();
        }

        /**
         * Calls {@code handler} once with the acknowledged index if it moved since the last call that reported;
         * returns the work done (1 if the handler was called, else 0), as an Agrona duty cycle counts it.
         */
        public int poll(Handler handler) {
            long now = acknowledgements.quorumIndex.getVolatileValue();
            if (now <= reported) {
                return 0;
            }
            reported = now;
            handler.onAcknowledged(now);
            return 1;
        }

        /** The acknowledged index as last reported (or as found when the watch was made). */
        public long lastReported() {
            return reported;
        }
    }

    @Override
    public String toString() {
        return "QueueAcknowledgements[" + queueName + ", acknowledged 0x" + Long.toHexString(acknowledgedIndex()) + "]";
    }
}
