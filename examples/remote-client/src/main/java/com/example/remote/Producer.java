package com.example.remote;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;

import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Produces a numbered stream of orders to a QueueCluster's encrypted queue from outside its pods: each order is sealed
 * with the queue's data key in this process and appended through the leader ({@link RemoteQueue} finds it, and finds
 * the next one after a failover); a write returns once the queue's ack mode is met. Stops by itself after
 * {@code --count} acknowledged orders or {@code --duration}, whichever comes first.
 *
 * <p>Output: one {@code ACKED <index> <text>} line per acknowledged order, then
 * {@code PRODUCED <n> acknowledged ...}. Exit codes: 0 done; 1 a write not acknowledged or no node to connect to (the
 * reason on stderr, and whether the write may still be in the queue); 2 a wrong option (named on stderr).
 */
@Command(name = "producer", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Appends numbered orders to a QueueCluster's encrypted queue through its leader, each acknowledged"
        + " per the queue's ack mode; stops after --count orders or --duration.")
public final class Producer implements Callable<Integer> {
    @Mixin
    ClusterOptions cluster;

    @Option(names = "--count", paramLabel = "N", description = "Stop after N acknowledged orders.")
    Integer count;

    @Option(names = "--duration", paramLabel = "DURATION", converter = ClusterOptions.DurationConverter.class,
        description = "Stop after this long (e.g. 30s).")
    Duration duration;

    @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "0ms", converter = ClusterOptions.DurationConverter.class,
        description = "Pause between orders (default ${DEFAULT-VALUE}: as fast as acknowledgements come).")
    Duration interval;

    @Option(names = "--prefix", defaultValue = "order", description = "Each order's text is PREFIX-<number> (default ${DEFAULT-VALUE}).")
    String prefix;

    @Option(names = "--ack-timeout", paramLabel = "DURATION", defaultValue = "30s", converter = ClusterOptions.DurationConverter.class,
        description = "How long one write may take, retries on another leader included (default ${DEFAULT-VALUE}).")
    Duration ackTimeout;

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        System.exit(Cli.execute(new Producer(), args));
    }

    @Override
    public Integer call() throws InterruptedException {
        if (count == null && duration == null) {
            throw Cli.bad(spec, "give --count N or --duration D (or both): a producer that stops by itself");
        }
        Cli.requirePositive(spec, "--count", count);
        Cli.requireAboveZero(spec, "--duration", duration);
        Cli.requireAboveZero(spec, "--ack-timeout", ackTimeout);
        RemoteQueue.Builder builder = cluster.builder(spec, null).ackTimeout(ackTimeout);
        long started = System.nanoTime();
        long deadline = duration == null ? Long.MAX_VALUE : started + duration.toNanos();
        int acknowledged = 0;
        long lastIndex = -1;
        try (RemoteQueue queue = builder.build(); QueueAppender appender = queue.createAppender()) {
            System.out.println("CONNECTED queue " + queue.name() + " at " + queue.connectedNode());
            while ((count == null || acknowledged < count) && System.nanoTime() < deadline) {
                String text = prefix + "-" + acknowledged;
                try {
                    lastIndex = appender.write(text.getBytes(StandardCharsets.UTF_8));
                } catch (RemoteQueueException e) {
                    System.out.println("NOT_ACKED " + text);
                    System.err.println("producer: " + text + " not acknowledged: " + e.reason() + ": " + e.getMessage()
                        + " (may be in the queue: " + e.mayBeAppended() + ")");
                    summary(acknowledged, lastIndex, started, queue);
                    return 1;
                }
                acknowledged++;
                System.out.println("ACKED " + lastIndex + " " + text);
                if (!interval.isZero()) {
                    Thread.sleep(interval.toMillis());
                }
            }
            summary(acknowledged, lastIndex, started, queue);
            return 0;
        } catch (RemoteQueueException e) {
            System.err.println("producer: " + e.reason() + ": " + e.getMessage());
            return 1;
        }
    }

    private static void summary(int acknowledged, long lastIndex, long started, RemoteQueue queue) {
        System.out.printf("PRODUCED %d acknowledged (last index %d) in %.1f s; last connected to %s%n", acknowledged, lastIndex,
            (System.nanoTime() - started) / 1e9, queue.connectedNode());
    }
}
