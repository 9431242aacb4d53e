package io.queueenterprise.bench.harness;

import org.HdrHistogram.Histogram;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/** The producer process's handle on the {@link RemoteConsumer} child (one per bench). */
final class RemoteConsumerProcess implements AutoCloseable {

    private final Process process;
    private final PrintWriter commands;
    private final BlockingQueue<String> replies = new ArrayBlockingQueue<>(16);

    RemoteConsumerProcess(boolean pin) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        String argsFile = System.getProperty("qe.jvm.args.file");
        if (argsFile != null) {
            cmd.add("@" + argsFile); // the project's ONE flag list
            cmd.add("-Dqe.jvm.args.file=" + argsFile);
        } else {
            cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(RemoteConsumer.class.getName());
        if (!pin) {
            cmd.add("--no-pin");
        }
        process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        commands = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.startsWith("READY") || line.startsWith("DONE") || line.startsWith("ERROR")) {
                        replies.put(line);
                    }
                }
            } catch (IOException | InterruptedException ignored) {
                // process gone
            }
            replies.offer("ERROR consumer process exited");
        }, "qe-bench-remote-consumer-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** Sends RUN and waits for READY; returns what the child reported about its pinning. */
    String start(String subject, Path runDir, int size, int capacity, long warmupCount, long total, Path histogram)
            throws IOException, InterruptedException {
        commands.printf("RUN %s %s %d %d %d %d %s%n", subject, runDir, size, capacity, warmupCount, total, histogram);
        String reply = await(60);
        if (!reply.startsWith("READY")) {
            throw new IOException("consumer process: " + reply);
        }
        return reply.substring("READY".length()).trim().replace('_', ' ');
    }

    /** Waits for DONE; returns {received, lastReceiveNs} and fills {@code into} from the child's histogram. */
    long[] finish(Path histogramFile, Histogram into, long timeoutSeconds) throws Exception {
        String reply = await(timeoutSeconds);
        if (!reply.startsWith("DONE")) {
            throw new IOException("consumer process: " + reply);
        }
        Histogram h = Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Files.readAllBytes(histogramFile)),
                OpenLoopRun.HIGHEST_TRACKABLE_NS);
        into.add(h);
        String[] counts = reply.substring("DONE".length()).trim().split(" ");
        return new long[]{Long.parseLong(counts[0]), Long.parseLong(counts[1])};
    }

    private String await(long seconds) throws IOException, InterruptedException {
        String reply = replies.poll(seconds, TimeUnit.SECONDS);
        if (reply == null) {
            throw new IOException("consumer process did not answer within " + seconds + " s");
        }
        return reply;
    }

    @Override
    public void close() {
        commands.println("EXIT");
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
