package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.wire.ReadMarshallable;
import net.openhft.chronicle.wire.WireIn;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * The tailer the application holds: refuses use after {@link #close()} (or once its queue is closed) and turns what
 * escapes the read protocol (closed, another thread, a fault in mapped memory while copying) into typed errors
 * ({@link ChronicleFailures}), naming the excerpt's index. A document reader's own exception passes through
 * unchanged. Adds no allocation: the checks are a field read, the translation is on the failure path only.
 */
final class CheckedTailer implements QueueTailer {
    private final String queueName;
    private final AbstractTailer delegate;
    private final ChronicleQueue queue;
    private final DocumentFence fence = new DocumentFence();
    private boolean closed;

    CheckedTailer(String queueName, AbstractTailer delegate, ChronicleQueue queue) {
        this.queueName = queueName;
        this.delegate = delegate;
        this.queue = queue;
    }

    /** Passes the application's document reader on, remembering what it threw (so it is not taken for damage). */
    private static final class DocumentFence implements ReadMarshallable {
        ReadMarshallable reader;
        Throwable thrown;

        @Override
        public void readMarshallable(WireIn wire) {
            try {
                reader.readMarshallable(wire);
            } catch (RuntimeException | Error e) {
                thrown = e;
                throw e;
            }
        }
    }

    @Override
    public int read(byte[] dst, int offset, int capacity) {
        checkOpen();
        Objects.checkFromIndexSize(offset, capacity, dst.length); // the caller's mistake, not the queue's
        try {
            return delegate.read(dst, offset, capacity);
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot read the excerpt");
        }
    }

    @Override
    public int read(ByteBuffer dst) {
        checkOpen();
        Objects.requireNonNull(dst, "dst");
        try {
            return delegate.read(dst);
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot read the excerpt");
        }
    }

    @Override
    public boolean read(Bytes<?> dst) {
        checkOpen();
        Objects.requireNonNull(dst, "dst");
        try {
            return delegate.read(dst);
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot read the excerpt");
        }
    }

    @Override
    public boolean readDocument(ReadMarshallable reader) {
        checkOpen();
        fence.reader = Objects.requireNonNull(reader, "reader");
        fence.thrown = null;
        try {
            return delegate.readDocument(fence);
        } catch (RuntimeException | Error e) {
            if (e == fence.thrown) {
                throw e; // the application's own: the excerpt stays unread
            }
            throw failure(e, "cannot read the excerpt");
        } finally {
            fence.reader = null;
        }
    }

    @Override
    public boolean skip() {
        checkOpen();
        try {
            return delegate.skip();
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot skip the excerpt");
        }
    }

    @Override
    public long skipDamaged() {
        checkOpen();
        if (queue.isClosed()) { // it would find nothing: a closed queue's last index is unknown
            throw new QueueStateException(queueName, "cannot skip the damage: the queue in " + queue.fileAbsolutePath()
                    + " is closed", null);
        }
        try {
            return delegate.skipDamaged();
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot move past the damage");
        }
    }

    @Override
    public long lastReadIndex() {
        return delegate.lastReadIndex();
    }

    @Override
    public boolean moveToIndex(long index) {
        checkOpen();
        try {
            return delegate.moveToIndex(index);
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot move to the excerpt");
        }
    }

    @Override
    public QueueTailer toStart() {
        checkOpen();
        try {
            delegate.toStart();
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot move to the start");
        }
        return this;
    }

    @Override
    public QueueTailer toEnd() {
        checkOpen();
        try {
            delegate.toEnd();
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot move to the end");
        }
        return this;
    }

    @Override
    public void close() {
        if (closed) {
            return; // twice would release the queue's last-index watch for another tailer
        }
        closed = true;
        try {
            delegate.close();
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot close the tailer");
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new QueueStateException(queueName, "the tailer is closed", null);
        }
    }

    private RuntimeException failure(Throwable e, String what) {
        if (!ChronicleFailures.translatable(e)) {
            throw (Error) e;
        }
        return ChronicleFailures.classify(queueName, queue, "tailer", e, delegate.chronicleIndex(), what);
    }

    @Override
    public String toString() {
        return delegate.toString();
    }
}
