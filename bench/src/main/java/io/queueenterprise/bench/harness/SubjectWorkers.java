package io.queueenterprise.bench.harness;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.queueenterprise.bench.subject.SubjectFactory;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
        private final ChildJvm child;
        private final ObjectMapper json = SubjectWorker.mapper();
        final Environment.Jvm jvm;

        Worker(String java) throws Exception {
            // JFR's stack samples may land between safepoint polls only with these
            List<String> flags = config.attribution
                    ? List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints") : List.of();
            child = new ChildJvm("subject JVM (" + java + ")", java, flags, SubjectWorker.class, List.of(),
                    SubjectWorker::isReply);
            try {
                jvm = json.readValue(child.expect("HELLO", 120), Environment.Jvm.class);
                child.send("CONFIG " + json.writeValueAsString(config));
                child.expect("OK", 60);
            } catch (Exception e) {
                child.destroy(); // a JVM that did not start properly is not left behind
                throw new IOException("subject JVM " + java + " did not start: " + e.getMessage(), e);
            }
        }

        SubjectWorker.Reply run(String subject, int size, double rate, double warmupS, double durationS)
                throws Exception {
            child.send(String.format("RUN %s %d %s %s %s", subject, size, rate, warmupS, durationS));
            long timeout = 60 + 2 * (long) (warmupS + durationS) + 2 * ConsumerLoop.idleLimitSeconds();
            return json.readValue(child.expect("RESULT", timeout), SubjectWorker.Reply.class);
        }

        void quiesce() throws Exception {
            child.send("QUIESCE");
            child.expect("OK", 60);
        }

        void close() {
            child.close();
        }
    }
}
