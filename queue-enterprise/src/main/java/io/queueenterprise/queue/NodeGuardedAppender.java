package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.core.values.LongValue;
import net.openhft.chronicle.wire.WriteMarshallable;

import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * An appender of a queue hosted by a replication node (the node recorded its marks in the queue's metadata,
 * see {@link ReplicaStore}): refuses to write once the node stops leading (one volatile read of mapped memory per
 * write), and, when made to wait for acknowledgements (quorum mode, {@link EnterpriseQueue#createAppender()}),
 * returns only when a majority of replicas holds the excerpt ({@link QueueAcknowledgements#awaitAcknowledged}),
 * else throws {@link AckTimeoutException}. A pipelined appender ({@link EnterpriseQueue#createPipelinedAppender()})
 * returns as soon as the excerpt is written here. Allocation-free.
 */
final class NodeGuardedAppender implements QueueAppender {
    private final String queueName;
    private final QueueAppender delegate;
    private final LongValue writableTerm;
    /** The node's leader lease ({@link ReplicaStore#publishLeaseUntil}), on {@code System.nanoTime}'s clock. */
    private final LongValue leaseUntil;
    private final QueueAcknowledgements acknowledgements; // null: returns once written locally
    private final Duration ackTimeout;

    NodeGuardedAppender(String queueName, QueueAppender delegate, LongValue writableTerm, LongValue leaseUntil,
                        QueueAcknowledgements acknowledgements, Duration ackTimeout) {
        if ((acknowledgements == null) != (ackTimeout == null)) {
            throw new IllegalArgumentException("acknowledgements and their timeout go together");
        }
        this.queueName = queueName;
        this.delegate = delegate;
        this.writableTerm = writableTerm;
        this.leaseUntil = leaseUntil;
        this.acknowledgements = acknowledgements;
        this.ackTimeout = ackTimeout;
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
        if (acknowledgements != null) {
            acknowledgements.awaitAcknowledged(index, ackTimeout); // a majority holds it: the lease was held then
        } else if (System.nanoTime() >= leaseUntil.getVolatileValue()) {
            // Returned once written here: only while the lease still holds (the check before the write may be long
            // past). A pipelined appender in quorum mode says so too: written, maybe in the queue, not acknowledged.
            throw new AckTimeoutException(queueName, index, "the node's leader lease lapsed while it was written");
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
        return "NodeGuardedAppender[" + queueName + (ackTimeout == null ? ", returns once written here" : ", waits for a quorum " + ackTimeout) + "]";
    }
}
