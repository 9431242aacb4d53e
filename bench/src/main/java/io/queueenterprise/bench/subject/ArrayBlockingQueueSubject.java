package io.queueenterprise.bench.subject;

import java.util.concurrent.ArrayBlockingQueue;

/** Context peer: {@link ArrayBlockingQueue} (lock-based), offer/poll, persists nothing. */
public final class ArrayBlockingQueueSubject implements Subject {

    /** Registered as {@code peer-abq}. */
    public static final class Factory implements SubjectFactory {
        @Override public String name() { return "peer-abq"; }
        @Override public String description() {
            return "java.util.concurrent.ArrayBlockingQueue offer/poll, in-process, persists nothing";
        }
        @Override public Role role() { return Role.PEER; }
        @Override public boolean persists() { return false; }
        @Override public Subject open(SubjectConfig config) {
            return new ArrayBlockingQueueSubject(config);
        }
    }

    private final ArrayBlockingQueue<byte[]> queue;
    private final PooledMessages pool;
    // Deliberately not shared with the other in-process peer through a java.util.Queue base class:
    // one call site per queue type keeps each subject's JIT type profile monomorphic, so one peer's
    // run does not slow another's inlining.

    ArrayBlockingQueueSubject(SubjectConfig config) {
        queue = new ArrayBlockingQueue<>(config.capacity());
        pool = new PooledMessages(config.capacity(), config.messageSize());
    }

    @Override public Producer producer() {
        return intendedNanos -> {
            byte[] m = pool.next(intendedNanos);
            while (!queue.offer(m)) {
                Thread.onSpinWait();
            }
        };
    }

    @Override public Consumer consumer() {
        return () -> {
            byte[] m = queue.poll();
            return m == null ? NONE : PooledMessages.intended(m);
        };
    }

    @Override public void close() {
        queue.clear();
    }
}
