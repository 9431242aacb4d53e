package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.ReplicationException;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Requests other threads (the admin endpoint, the node's callers) hand to the duty cycle, which runs them between
 * its other work: role changes and status are only ever touched on that thread. Bounded: a caller is told the node
 * is busy rather than queued without limit.
 *
 * @param <T> what a request runs against (the agent)
 */
final class AdminCommands<T> {
    private record Command<T>(Function<T, Object> action, CompletableFuture<Object> result) {
    }

    private final String nodeId;
    private final ManyToOneConcurrentArrayQueue<Command<T>> queue = new ManyToOneConcurrentArrayQueue<>(64);
    private volatile boolean closed;

    AdminCommands(String nodeId) {
        this.nodeId = nodeId;
    }

    /** Queues {@code action}; the future completes with its result or its exception. Any thread. */
    <R> CompletableFuture<R> submit(Function<T, R> action) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        if (closed || !queue.offer(new Command<>(action::apply, result))) {
            result.completeExceptionally(new ReplicationException(closed ? "node " + nodeId + " is closed"
                    : "node " + nodeId + " is busy: too many admin requests in flight"));
        }
        @SuppressWarnings("unchecked")
        CompletableFuture<R> typed = (CompletableFuture<R>) (CompletableFuture<?>) result;
        return typed;
    }

    /** Runs every queued request against {@code target}; how many. Duty-cycle thread. */
    int run(T target) {
        int n = 0;
        Command<T> c;
        while ((c = queue.poll()) != null) {
            n++;
            try {
                c.result.complete(c.action.apply(target));
            } catch (RuntimeException e) {
                c.result.completeExceptionally(e);
            }
        }
        return n;
    }

    /** No more requests are taken; those queued fail. */
    void close() {
        closed = true;
        Command<T> c;
        while ((c = queue.poll()) != null) {
            c.result.completeExceptionally(new ReplicationException("node " + nodeId + " is closed"));
        }
    }
}
