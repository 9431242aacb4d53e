package io.queueenterprise.bench.harness;

import io.queueenterprise.bench.subject.Subject;
import io.queueenterprise.bench.subject.SubjectConfig;
import io.queueenterprise.bench.subject.SubjectRegistry;
import org.HdrHistogram.Histogram;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The consumer in ANOTHER process ({@code --consumer-process}): started once per bench by
 * {@link RemoteConsumerProcess} with {@code java @bin/jvm.args -cp <same classpath>}, it stays up
 * (so its JIT stays warm) and serves one run per command line on stdin:
 * <pre>
 *   RUN subject runDir size capacity warmupCount total histogramFile
 *     -> READY pinning        (consumer side open; the producer may start)
 *     -> DONE received lastReceiveNs  (histogram written, HdrHistogram compressed encoding)
 *   EXIT
 * </pre>
 * It opens the subject from the same {@link SubjectConfig} as the producer process (same run
 * directory: the same queue files, the same key directory) and consumes with the same
 * {@link ConsumerLoop} (same recording, same stop rule) as the in-process consumer ({@code System.nanoTime()} is
 * CLOCK_MONOTONIC, shared by processes on one Linux machine).
 */
public final class RemoteConsumer {

    private RemoteConsumer() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                StandardCharsets.UTF_8);
        System.setOut(System.err); // libraries that print must not disturb the protocol
        Pinning pinning = new Pinning(args.length == 0 || !"--no-pin".equals(args[0]));
        pinning.pinCurrentThread(Pinning.CONSUMER);
        String pinned = String.valueOf(pinning.info().threads().getOrDefault(Pinning.CONSUMER, "not pinned"))
                .replace(' ', '_');
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Histogram histogram = new Histogram(OpenLoopRun.HIGHEST_TRACKABLE_NS, 3);
        String line;
        while ((line = in.readLine()) != null) {
            String[] a = line.trim().split(" ");
            if (a[0].equals("EXIT")) {
                return;
            }
            if (!a[0].equals("RUN") || a.length != 8) {
                out.println("ERROR bad command: " + line);
                continue;
            }
            try {
                histogram.reset();
                SubjectConfig config = new SubjectConfig(Integer.parseInt(a[3]), Path.of(a[2]), Integer.parseInt(a[4]));
                long warmupCount = Long.parseLong(a[5]);
                long total = Long.parseLong(a[6]);
                ConsumerLoop loop = new ConsumerLoop(histogram, null, null);
                try (Subject subject = SubjectRegistry.get(a[1]).open(config);
                     Subject.Consumer c = subject.consumer()) {
                    out.println("READY " + pinned);
                    loop.consume(c, warmupCount, total);
                }
                ByteBuffer buf = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
                int n = histogram.encodeIntoCompressedByteBuffer(buf);
                Files.write(Path.of(a[7]), java.util.Arrays.copyOf(buf.array(), n));
                out.println("DONE " + loop.received + " " + loop.lastReceiveNs);
            } catch (Throwable t) {
                out.println("ERROR " + t.toString().replace('\n', ' '));
            }
        }
    }
}
