package com.example.remote;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;

import io.queueenterprise.queue.QueueException;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import io.queueenterprise.remote.RemoteTailer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Consumes a QueueCluster's encrypted queue from outside its pods with a {@link RemoteTailer}: any replica serves it (the
 * one given first, {@code --prefer-replica}, while it answers; then another, without gap or duplicate), each excerpt
 * opened with the queue's data key in this process. With the QUORUM or REPLICATED_READS ack mode it reads only what a
 * majority holds, so no failover takes back what it read. It starts at the queue's start, or right after
 * {@code --after-index} (where an earlier run stopped: the application keeps that position wherever it keeps its
 * state), and stops by itself after {@code --count} excerpts, when nothing has arrived for {@code --idle-timeout}, or
 * after {@code --duration}.
 *
 * <p>Output: one {@code READ <index> <text>} line per excerpt, then {@code CONSUMED <n> ...} with the option that
 * resumes after the last one. Exit codes: 0 done; 1 the position is not held, an excerpt that does not open, no
 * replica serves (the reason on stderr); 2 a wrong option.
 */
@Command(name = "consumer", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Reads a QueueCluster's encrypted queue from any replica, from the start or after --after-index;"
        + " stops after --count excerpts, --idle-timeout without one, or --duration.")
public final class Consumer implements Callable<Integer> {
    @Mixin
    ClusterOptions cluster;

    @Option(names = "--after-index", paramLabel = "INDEX",
        description = "Resume right after this index (the last one an earlier run read); default: the queue's start.")
    Long afterIndex;

    @Option(names = "--prefer-replica", paramLabel = "N",
        description = "Be served by replica N (its position in the node list) while it answers.")
    Integer preferredReplica;

    @Option(names = "--count", paramLabel = "N", description = "Stop after N excerpts.")
    Integer count;

    @Option(names = "--idle-timeout", paramLabel = "DURATION", defaultValue = "10s", converter = ClusterOptions.DurationConverter.class,
        description = "Stop when nothing arrived for this long (default ${DEFAULT-VALUE}).")
    Duration idleTimeout;

    @Option(names = "--duration", paramLabel = "DURATION", converter = ClusterOptions.DurationConverter.class,
        description = "Stop after this long.")
    Duration duration;

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        System.exit(Cli.execute(new Consumer(), args));
    }

    @Override
    public Integer call() throws InterruptedException {
        Cli.requirePositive(spec, "--count", count);
        if (afterIndex != null && afterIndex < 0) {
            throw Cli.bad(spec, "--after-index: " + afterIndex + " is not an index (>= 0)");
        }
        Cli.requireAboveZero(spec, "--idle-timeout", idleTimeout);
        Cli.requireAboveZero(spec, "--duration", duration);
        RemoteQueue.Builder builder = cluster.builder(spec, preferredReplica);
        long started = System.nanoTime();
        long deadline = duration == null ? Long.MAX_VALUE : started + duration.toNanos();
        byte[] buffer = new byte[512 * 1024];   // the largest excerpt a remote client writes
        int consumed = 0;
        long lastIndex = afterIndex == null ? -1 : afterIndex;
        try (RemoteQueue queue = builder.build(); RemoteTailer tailer = queue.createTailer()) {
            if (afterIndex != null && !resumeAfter(tailer, afterIndex, buffer)) {
                return 1;
            }
            long lastArrival = System.nanoTime();
            while ((count == null || consumed < count) && System.nanoTime() < deadline) {
                int length = tailer.read(buffer);
                if (length < 0) {
                    if (System.nanoTime() - lastArrival > idleTimeout.toNanos()) {
                        break;
                    }
                    Thread.sleep(1);   // read() also drives the client: keep calling it
                    continue;
                }
                lastArrival = System.nanoTime();
                lastIndex = tailer.lastReadIndex();
                consumed++;
                System.out.println("READ " + lastIndex + " " + new String(buffer, 0, length, StandardCharsets.UTF_8));
            }
            System.out.printf("CONSUMED %d (last index %d) in %.1f s; served by %s, moved to another replica %d times; %s%n",
                consumed, lastIndex, (System.nanoTime() - started) / 1e9, tailer.servingNode(), tailer.resumes(),
                lastIndex < 0 ? "nothing read yet: run again from the start" : "resume with --after-index " + lastIndex);
            return 0;
        } catch (RemoteQueueException e) {
            System.err.println("consumer: " + e.reason() + ": " + e.getMessage());
            return 1;
        } catch (QueueException e) {
            // an excerpt that does not open with our keys (tampered, or another key): never skipped silently
            System.err.println("consumer: after index " + lastIndex + ": " + e.getMessage());
            return 1;
        }
    }

    /** Positions the tailer on {@code index} and reads that excerpt (already consumed) again to check it is there. */
    private boolean resumeAfter(RemoteTailer tailer, long index, byte[] buffer) throws InterruptedException {
        if (!tailer.moveToIndex(index)) {
            System.err.println("consumer: --after-index " + index + ": no replica holds that index (not written yet,"
                + " or behind the queue's retention)");
            return false;
        }
        long deadline = System.nanoTime() + cluster.connectTimeout.toNanos();
        while (tailer.read(buffer) < 0) {
            if (System.nanoTime() > deadline) {
                System.err.println("consumer: --after-index " + index + ": the excerpt there did not arrive within " + cluster.connectTimeout);
                return false;
            }
            Thread.sleep(1);
        }
        if (tailer.lastReadIndex() != index) {
            System.err.println("consumer: --after-index " + index + ": the replica served index " + tailer.lastReadIndex() + " instead");
            return false;
        }
        return true;
    }
}
