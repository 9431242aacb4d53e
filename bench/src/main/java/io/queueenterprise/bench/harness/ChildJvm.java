package io.queueenterprise.bench.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A child JVM of the bench spoken to by lines: commands on its stdin, replies on its stdout (a reader thread
 * queues the lines {@code isReply} accepts), stderr passed through. Started with the project's one flag file
 * and this JVM's class path; {@link #close()} sends EXIT and destroys it if it does not go.
 */
final class ChildJvm implements AutoCloseable {
    private final String name;
    private final Process process;
    private final PrintWriter commands;
    private final BlockingQueue<String> replies = new ArrayBlockingQueue<>(16);

    /** {@code extraJvmArgs} go before the class path; {@code args} after the main class. */
    ChildJvm(String name, String java, List<String> extraJvmArgs, Class<?> main, List<String> args,
             Predicate<String> isReply) throws IOException {
        this.name = name;
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        String argsFile = System.getProperty("qe.jvm.args.file");
        if (argsFile != null) {
            cmd.add("@" + argsFile); // the project's ONE flag list
            cmd.add("-Dqe.jvm.args.file=" + argsFile);
        } else {
            cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                    .filter(a -> !a.startsWith("-agentlib") && !a.startsWith("-javaagent")).toList());
        }
        cmd.addAll(extraJvmArgs);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(args);
        process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        commands = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (isReply.test(line)) {
                        replies.put(line);
                    } else {
                        // the JVM's own log (-Xlog writes to stdout) is no reply, but it is not hidden either
                        System.err.println("[" + name + "] " + line);
                    }
                }
            } catch (IOException | InterruptedException ignored) {
                // process gone
            }
            replies.offer("ERROR " + name + " exited");
        }, "qe-bench-" + name + "-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** This JVM's own java executable. */
    static String currentJava() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    void send(String command) {
        commands.println(command);
    }

    /** The next reply, which must start with {@code word}; returns what follows it, trimmed. */
    String expect(String word, long seconds) throws IOException, InterruptedException {
        String reply = replies.poll(seconds, TimeUnit.SECONDS);
        if (reply == null) {
            throw new IOException(name + " did not answer within " + seconds + " s");
        }
        if (!reply.startsWith(word)) {
            throw new IOException(name + ": " + reply);
        }
        return reply.substring(word.length()).trim();
    }

    /** Ends it at once: for a child that did not start properly. */
    void destroy() {
        process.destroyForcibly();
    }

    @Override
    public void close() {
        commands.println("EXIT");
        try {
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
