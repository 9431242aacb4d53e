package io.queueenterprise.bench.subject;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Pre-allocated messages for the in-process peers: the producer writes the intended time into the
 * next pooled {@code byte[]} of the configured size and passes the reference through the queue, so
 * the hot path allocates nothing. The pool is larger than the queue's capacity plus the one message
 * the consumer may hold, so a slot is never rewritten while still in flight.
 */
final class PooledMessages {
    private static final VarHandle LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final byte[][] pool;
    private final int mask;
    private long next;

    PooledMessages(int queueCapacity, int messageSize) {
        int size = Integer.highestOneBit(queueCapacity) << 1; // >= capacity + 2 for capacity >= 2
        pool = new byte[size][];
        for (int i = 0; i < size; i++) {
            pool[i] = new byte[messageSize];
        }
        mask = size - 1;
    }

    /** Producer thread only. */
    byte[] next(long intendedNanos) {
        byte[] m = pool[(int) (next++ & mask)];
        LONG.set(m, 0, intendedNanos);
        return m;
    }

    static long intended(byte[] message) {
        return (long) LONG.get(message, 0);
    }
}
