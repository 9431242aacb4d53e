package io.queueenterprise.bench.subject;

import com.lmax.disruptor.EventPoller;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.YieldingWaitStrategy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Context peer: LMAX Disruptor {@link RingBuffer} (single producer) whose events are pre-allocated
 * {@code byte[]} of the message size; the producer claims, writes and publishes, the consumer
 * busy-polls an {@link EventPoller} one event at a time. Persists nothing.
 */
public final class DisruptorSubject implements Subject {

    /** Registered as {@code peer-disruptor}. */
    public static final class Factory implements SubjectFactory {
        @Override public String name() { return "peer-disruptor"; }
        @Override public String description() {
            return "LMAX Disruptor single-producer RingBuffer + EventPoller, in-process, persists nothing";
        }
        @Override public Role role() { return Role.PEER; }
        @Override public boolean persists() { return false; }
        @Override public Subject open(SubjectConfig config) {
            return new DisruptorSubject(config);
        }
    }

    private static final VarHandle LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final RingBuffer<byte[]> ring;
    private final EventPoller<byte[]> poller;

    DisruptorSubject(SubjectConfig config) {
        int size = config.messageSize();
        ring = RingBuffer.createSingleProducer(() -> new byte[size], config.capacity(),
                new YieldingWaitStrategy());
        poller = ring.newPoller();
        ring.addGatingSequences(poller.getSequence());
    }

    @Override public Producer producer() {
        return intendedNanos -> {
            long seq = ring.next(); // spins (LockSupport.parkNanos(1)) while full
            LONG.set(ring.get(seq), 0, intendedNanos);
            ring.publish(seq);
        };
    }

    @Override public Consumer consumer() {
        return new Consumer() {
            private long last;
            private final EventPoller.Handler<byte[]> handler = (event, sequence, endOfBatch) -> {
                last = (long) LONG.get(event, 0);
                return false; // one event per poll()
            };

            @Override public long poll() {
                last = NONE;
                try {
                    poller.poll(handler);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                return last;
            }
        };
    }

    @Override public void close() {
    }
}
