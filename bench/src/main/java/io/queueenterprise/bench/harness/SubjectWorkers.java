package io.queueenterprise.bench.harness;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.queueenterprise.bench.subject.SubjectFactory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Runs points for the sweep: in a {@link SubjectWorker} JVM per (subject, java executable), started
 * on first use and kept (its JIT stays warm) until {@link #close}; or, with
 * {@code forkSubjects = false} (tests), in this JVM. Either way every run is followed by a quiesce
 * before the next one starts.
 */
public final class SubjectWorkers implements AutoCloseable {

    private final BenchConfig config;
    private final Pinning pinning;
    private final Map<String, Worker> workers = new LinkedHashMap<>();
    /** java executable -> the JVM it reported (version, vendor, flags). */
    private final Map<String, Environment.Jvm> jvms = new LinkedHashMap<>();

    public SubjectWorkers(BenchConfig config, Pinning pinning) {
        this.config = config;
        this.pinning = pinning;
    }

    /** This JVM's executable: the default {@code --jvm}. */
    public static String currentJava() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    /** One run, then a quiesce of the JVM that ran it. */
    public RunResult run(SubjectFactory factory, String java, int size, double rate, double warmupSeconds,
                         double durationSeconds) throws Exception {
        if (!config.forkSubjects) {
            RunResult r = OpenLoopRun.run(factory, size, rate, warmupSeconds, durationSeconds, config, pinning);
            SubjectWorker.quiesce(config.quiesceSeconds);
            return r;
        }
        Worker w = workers.get(factory.name() + " " + java);
        if (w == null) {
            w = new Worker(java);
            workers.put(factory.name() + " " + java, w);
            jvms.putIfAbsent(java, w.jvm);
        }
        SubjectWorker.Reply reply = w.run(factory.name(), size, rate, warmupSeconds, durationSeconds);
        reply.pinning().forEach((role, cpu) -> pinning.record(role + " (subject JVM)", cpu));
        w.quiesce();
        return reply.result();
    }

    /** The JVMs the workers reported, by executable (empty when not forking). */
    public Map<String, Environment.Jvm> jvms() {
        return jvms;
    }

    @Override
    public void close() {
        for (Worker w : workers.values()) {
            w.close();
        }
        workers.clear();
    }

    private final class Worker {
        private final Process process;
        private final PrintWriter commands;
        private final BlockingQueue<String> replies = new ArrayBlockingQueue<>(16);
        private final ObjectMapper json = SubjectWorker.mapper();
        final Environment.Jvm jvm;

        Worker(String java) throws Exception {
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
            if (config.attribution) {
                // JFR's stack samples may land between safepoint polls only with these
                cmd.add("-XX:+UnlockDiagnosticVMOptions");
                cmd.add("-XX:+DebugNonSafepoints");
            }
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path"));
            cmd.add(SubjectWorker.class.getName());
            process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            commands = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        replies.put(line);
                    }
                } catch (IOException | InterruptedException ignored) {
                    // process gone
                }
                replies.offer("ERROR subject JVM exited (" + java + ")");
            }, "qe-bench-worker-reader");
            reader.setDaemon(true);
            reader.start();
            try {
                jvm = json.readValue(expect("HELLO", 120), Environment.Jvm.class);
                commands.println("CONFIG " + json.writeValueAsString(config));
                expect("OK", 60);
            } catch (Exception e) {
                process.destroyForcibly(); // a JVM that did not start properly is not left behind
                throw new IOException("subject JVM " + java + " did not start: " + e.getMessage(), e);
            }
        }

        SubjectWorker.Reply run(String subject, int size, double rate, double warmupS, double durationS)
                throws Exception {
            commands.printf("RUN %s %d %s %s %s%n", subject, size, rate, warmupS, durationS);
            long timeout = 60 + 2 * (long) (warmupS + durationS) + 2 * ConsumerLoop.idleLimitSeconds();
            return json.readValue(expect("RESULT", timeout), SubjectWorker.Reply.class);
        }

        void quiesce() throws Exception {
            commands.println("QUIESCE");
            expect("OK", 60);
        }

        private String expect(String word, long seconds) throws IOException, InterruptedException {
            String reply = replies.poll(seconds, TimeUnit.SECONDS);
            if (reply == null) {
                throw new IOException("subject JVM did not answer within " + seconds + " s");
            }
            if (!reply.startsWith(word)) {
                throw new IOException("subject JVM: " + reply);
            }
            return reply.substring(word.length()).trim();
        }

        void close() {
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
}
