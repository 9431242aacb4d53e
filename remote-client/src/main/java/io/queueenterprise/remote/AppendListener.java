package io.queueenterprise.remote;

/**
 * Told how each asynchronous append ({@link RemoteAppender#writeAsync}) settled, in the order they were written, on
 * the thread that drives the appender, from within its calls ({@link RemoteAppender#poll}, {@code writeAsync},
 * {@code write}, {@link RemoteAppender#flush}, {@code close}). Nothing is allocated to tell an acknowledgement. A
 * listener must not call the appender back.
 */
public interface AppendListener {
    /** The append given {@code correlation} is in the queue at {@code index}, and the queue's ack mode is met. */
    void onAcknowledged(long correlation, long index);

    /**
     * The append given {@code correlation} failed: {@link RemoteQueueException#mayBeAppended()} says whether it may be
     * in the queue anyway. Every later append of the same window fails with it (the appender goes on under a new
     * writer epoch).
     */
    void onFailed(long correlation, RemoteQueueException failure);
}
