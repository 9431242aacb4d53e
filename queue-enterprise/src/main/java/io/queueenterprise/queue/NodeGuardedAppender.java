package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.core.values.LongValue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.WriteMarshallable;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * An appender of a queue hosted by a replication node (the node recorded its marks in the queue's metadata,
 * see {@link ReplicaStore}): refuses to write once the node stops leading (one volatile read of mapped memory per
 * write), and in quorum mode returns only when a majority of replicas holds the excerpt, else throws
 * {@link AckTimeoutException}. Allocation-free.
 */
final class NodeGuardedAppender implements QueueAppender {
    /** Spin this long before yielding, then park: a quorum ack on loopback takes tens of microseconds. */
    private static final long SPIN_NANOS = 50_000;
    private static final long YIELD_NANOS = 1_000_000;
    private static final long PARK_NANOS = 50_000;

    private final String queueName;
    private final QueueAppender delegate;
    private final LongValue writableTerm;
    /** The node's leader lease ({@link ReplicaStore#publishLeaseUntil}), on {@code System.nanoTime}'s clock. */
    private final LongValue leaseUntil;
    private final SingleChronicleQueue chronicle;
    private final Duration ackTimeout; // null: not quorum
    private final long ackTimeoutNanos;

    NodeGuardedAppender(String queueName, QueueAppender delegate, LongValue writableTerm, LongValue leaseUntil,
                        SingleChronicleQueue chronicle, Duration ackTimeout) {
        this.queueName = queueName;
        this.delegate = delegate;
        this.writableTerm = writableTerm;
        this.leaseUntil = leaseUntil;
        this.chronicle = chronicle;
        this.ackTimeout = ackTimeout;
        this.ackTimeoutNanos = ackTimeout == null ? 0 : ackTimeout.toNanos();
    }

    private void checkWritable() {
        if (writableTerm.getVolatileValue() <= 0) {
            throw new QueueConfigurationException(queueName, QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE,
                    "the replication node hosting this queue does not lead it now (follower or fenced); nothing was written");
        }
        if (System.nanoTime() >= leaseUntil.getVolatileValue()) {
            throw new QueueConfigurationException(queueName, QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE,
                    "the replication node hosting this queue leads it but holds no lease now (it has not heard a majority"
                            + " of replicas at its term lately, or its term is not confirmed yet); nothing was written");
        }
    }

    private long acknowledged(long index) {
        if (ackTimeout == null) {
            // Acknowledged locally: only while the lease still holds (the check before the write may be long past).
            if (System.nanoTime() >= leaseUntil.getVolatileValue()) {
                throw new AckTimeoutException(queueName, index, "the node's leader lease lapsed while it was written");
            }
            return index;
        }
        long start = System.nanoTime();
        long quorum;
        while ((quorum = chronicle.lastAcknowledgedIndexReplicated()) < index) {
            long waited = System.nanoTime() - start;
            if (waited > ackTimeoutNanos) {
                throw new AckTimeoutException(queueName, index, ackTimeout, quorum);
            }
            if (waited < SPIN_NANOS) {
                Thread.onSpinWait();
            } else if (waited < YIELD_NANOS) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(PARK_NANOS);
            }
        }
        return index;
    }

    @Override
    public long write(byte[] src, int offset, int length) {
        checkWritable();
        return acknowledged(delegate.write(src, offset, length));
    }

    @Override
    public long write(ByteBuffer src) {
        checkWritable();
        return acknowledged(delegate.write(src));
    }

    @Override
    public long write(BytesStore<?, ?> src) {
        checkWritable();
        return acknowledged(delegate.write(src));
    }

    @Override
    public long writeDocument(WriteMarshallable document) {
        checkWritable();
        return acknowledged(delegate.writeDocument(document));
    }

    @Override
    public long lastIndexAppended() {
        return delegate.lastIndexAppended();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "NodeGuardedAppender[" + queueName + (ackTimeout == null ? "" : ", quorum " + ackTimeout) + "]";
    }
}
