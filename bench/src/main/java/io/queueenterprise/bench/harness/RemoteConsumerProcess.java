package io.queueenterprise.bench.harness;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The producer process's handle on the {@link RemoteConsumer} child (one per bench). */
final class RemoteConsumerProcess implements AutoCloseable {

    private final ChildJvm child;

    RemoteConsumerProcess(boolean pin) throws IOException {
        child = new ChildJvm("consumer process", ChildJvm.currentJava(), List.of(), RemoteConsumer.class,
                pin ? List.of() : List.of("--no-pin"),
                line -> line.startsWith("READY") || line.startsWith("DONE") || line.startsWith("ERROR"));
    }

    /** Sends RUN and waits for READY; returns what the child reported about its pinning. */
    String start(String subject, Path runDir, int size, int capacity, long warmupCount, long total, Path histogram)
            throws IOException, InterruptedException {
        child.send(String.format("RUN %s %s %d %d %d %d %s", subject, runDir, size, capacity, warmupCount, total, histogram));
        return child.expect("READY", 60).replace('_', ' ');
    }

    /** Waits for DONE; returns {received, lastReceiveNs} and fills {@code into} from the child's histogram. */
    long[] finish(Path histogramFile, Histogram into, long timeoutSeconds) throws Exception {
        String counts = child.expect("DONE", timeoutSeconds);
        Histogram h = Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Files.readAllBytes(histogramFile)),
                OpenLoopRun.HIGHEST_TRACKABLE_NS);
        into.add(h);
        String[] received = counts.split(" ");
        return new long[]{Long.parseLong(received[0]), Long.parseLong(received[1])};
    }

    @Override
    public void close() {
        child.close();
    }
}
