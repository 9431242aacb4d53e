package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.wire.WireOut;
import net.openhft.chronicle.wire.WriteMarshallable;

import java.nio.ByteBuffer;

/**
 * The appender the application holds: refuses use after {@link #close()} and turns what Chronicle throws (closed,
 * another thread, a fault in mapped memory) into typed errors ({@link ChronicleFailures}). A document writer's own
 * exception passes through unchanged. Adds no allocation: the checks are a field read, the translation is on the
 * failure path only.
 */
final class CheckedAppender implements QueueAppender {
    private final String queueName;
    private final QueueAppender delegate;
    private final ChronicleQueue queue;
    private final DocumentFence fence = new DocumentFence();
    private boolean closed;
    private boolean wrote;

    CheckedAppender(String queueName, QueueAppender delegate, ChronicleQueue queue) {
        this.queueName = queueName;
        this.delegate = delegate;
        this.queue = queue;
    }

    /** Passes the application's document writer on, remembering what it threw (so it is not taken for damage). */
    private static final class DocumentFence implements WriteMarshallable {
        WriteMarshallable document;
        Throwable thrown;

        @Override
        public void writeMarshallable(WireOut wire) {
            try {
                document.writeMarshallable(wire);
            } catch (RuntimeException | Error e) {
                thrown = e;
                throw e;
            }
        }
    }

    @Override
    public long write(byte[] src, int offset, int length) {
        checkOpen();
        java.util.Objects.checkFromIndexSize(offset, length, src.length); // the caller's mistake, not the queue's
        try {
            return written(delegate.write(src, offset, length));
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot write");
        }
    }

    @Override
    public long write(ByteBuffer src) {
        checkOpen();
        java.util.Objects.requireNonNull(src, "src");
        try {
            return written(delegate.write(src));
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot write");
        }
    }

    @Override
    public long write(BytesStore<?, ?> src) {
        checkOpen();
        java.util.Objects.requireNonNull(src, "src");
        try {
            return written(delegate.write(src));
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot write");
        }
    }

    @Override
    public long writeDocument(WriteMarshallable document) {
        checkOpen();
        fence.document = java.util.Objects.requireNonNull(document, "document");
        fence.thrown = null;
        try {
            return written(delegate.writeDocument(fence));
        } catch (RuntimeException | Error e) {
            if (e == fence.thrown) {
                throw e; // the application's own: nothing was written
            }
            throw failure(e, "cannot write");
        } finally {
            fence.document = null;
        }
    }

    private long written(long index) {
        wrote = true;
        return index;
    }

    /** The index of this appender's last excerpt; -1 before its first (Chronicle throws there). */
    @Override
    public long lastIndexAppended() {
        if (!wrote) {
            checkOpen();
            return -1;
        }
        try {
            return delegate.lastIndexAppended();
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot tell the last index appended");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            delegate.close();
        } catch (RuntimeException | Error e) {
            throw failure(e, "cannot close the appender");
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new QueueStateException(queueName, "the appender is closed", null);
        }
    }

    private RuntimeException failure(Throwable e, String what) {
        if (!ChronicleFailures.translatable(e)) {
            throw (Error) e;
        }
        return ChronicleFailures.classify(queueName, queue, "appender", e, ExcerptException.UNKNOWN_INDEX, what);
    }

    @Override
    public String toString() {
        return delegate.toString();
    }
}
