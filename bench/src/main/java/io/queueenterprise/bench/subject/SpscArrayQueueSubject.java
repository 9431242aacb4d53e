package io.queueenterprise.bench.subject;

import org.jctools.queues.SpscArrayQueue;

/** Context peer: JCTools {@link SpscArrayQueue} (lock-free, single producer single consumer). */
public final class SpscArrayQueueSubject implements Subject {

    /** Registered as {@code peer-jctools-spsc}. */
    public static final class Factory implements SubjectFactory {
        @Override public String name() { return "peer-jctools-spsc"; }
        @Override public String description() {
            return "JCTools SpscArrayQueue offer/poll, in-process, persists nothing";
        }
        @Override public Role role() { return Role.PEER; }
        @Override public boolean persists() { return false; }
        @Override public Subject open(SubjectConfig config) {
            return new SpscArrayQueueSubject(config);
        }
    }

    private final SpscArrayQueue<byte[]> queue;
    private final PooledMessages pool;
    // Deliberately not shared with the other in-process peer through a java.util.Queue base class:
    // one call site per queue type keeps each subject's JIT type profile monomorphic, so one peer's
    // run does not slow another's inlining.

    SpscArrayQueueSubject(SubjectConfig config) {
        queue = new SpscArrayQueue<>(config.capacity());
        pool = new PooledMessages(queue.capacity(), config.messageSize());
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
