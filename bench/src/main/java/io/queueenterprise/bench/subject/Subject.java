package io.queueenterprise.bench.subject;

/**
 * One thing under measurement, opened for one run: a queue (persisted or not) with one producer
 * thread and one consumer thread. The harness calls {@link #producer()} on the producer thread and
 * {@link #consumer()} on the consumer thread (Chronicle appenders and tailers are thread-bound), so
 * each side may create its thread-local resources there.
 *
 * <p>Contract of the hot path: {@link Producer#send(long)} and {@link Consumer#poll()} allocate
 * nothing, take no locks and do not log. A message is {@link SubjectConfig#messageSize()} bytes
 * whose first 8 bytes carry the intended send time in {@code System.nanoTime()} units.
 */
public interface Subject extends AutoCloseable {

    /** Returned by {@link Consumer#poll()} when no message is available yet. */
    long NONE = Long.MIN_VALUE;

    /** The producer side; called once, on the producer thread. */
    Producer producer();

    /** The consumer side; called once, on the consumer thread. */
    Consumer consumer();

    /** Releases everything (queue files are deleted by the harness afterwards). */
    @Override
    void close();

    /** Producer side of a subject: writes one message of the configured size. */
    interface Producer extends AutoCloseable {
        /**
         * Writes one message whose first 8 bytes are {@code intendedNanos}. May spin while a
         * bounded in-memory queue is full (that shows up as producer lateness: "rate not kept").
         */
        void send(long intendedNanos);

        @Override
        default void close() {
        }
    }

    /** Consumer side of a subject. */
    interface Consumer extends AutoCloseable {
        /** The intended send time of the next message, or {@link Subject#NONE} if none yet. */
        long poll();

        @Override
        default void close() {
        }
    }
}
