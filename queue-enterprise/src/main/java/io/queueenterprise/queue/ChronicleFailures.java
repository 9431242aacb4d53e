package io.queueenterprise.queue;

import net.openhft.chronicle.core.io.ClosedIllegalStateException;
import net.openhft.chronicle.core.io.ThreadingIllegalStateException;
import net.openhft.chronicle.queue.ChronicleQueue;

/**
 * What a failure raised inside Chronicle (or by the JVM in Chronicle's mapped memory) means to the application, as
 * one of the library's typed errors: misuse (closed, another thread, a read-only queue) is a
 * {@link QueueStateException}; anything else while working on the files is damage, a
 * {@link CorruptedQueueException}. Used on failure paths only: classifying allocates.
 */
final class ChronicleFailures {
    private ChronicleFailures() {
    }

    /**
     * Whether {@code t} is a failure to translate: Chronicle's runtime exceptions, the JVM's {@link InternalError} for a
     * fault in mapped memory (a truncated file, a full file system), and the {@link AssertionError}s of Chronicle's own
     * consistency checks (with {@code -ea}). Other errors (out of memory, stack overflow) stay what they are.
     */
    static boolean translatable(Throwable t) {
        return t instanceof RuntimeException || t instanceof InternalError || t instanceof AssertionError;
    }

    /**
     * {@code t} as a typed error of queue {@code queueName}; {@code handle} says what was used ("appender", "tailer",
     * "queue"), {@code what} what failed ("cannot write").
     */
    static QueueException classify(String queueName, ChronicleQueue queue, String handle, Throwable t, long index,
                                   String what) {
        if (t instanceof QueueException) {
            return (QueueException) t;
        }
        if (queue.isClosed()) {
            return new QueueStateException(queueName, what + ": the queue in " + queue.fileAbsolutePath() + " is closed", t);
        }
        if (t instanceof ClosedIllegalStateException) {
            return new QueueStateException(queueName, what + ": the " + handle + " is closed", t);
        }
        if (t instanceof ThreadingIllegalStateException) {
            return new QueueStateException(queueName, what + ": the " + handle + " belongs to another thread than "
                    + Thread.currentThread().getName() + " (one " + handle + " per thread): " + t.getMessage(), t);
        }
        if (t instanceof UnsupportedOperationException && "Read only".equals(t.getMessage())) {
            return new QueueStateException(queueName, what + ": the queue in " + queue.fileAbsolutePath()
                    + " was opened read-only", t);
        }
        if (t instanceof IllegalStateException) {
            return new QueueStateException(queueName, what + ": the " + handle + " cannot be used: " + t.getMessage(), t);
        }
        return CorruptedQueueException.at(queueName, queue, index, what, t);
    }
}
