package io.queueenterprise.bench.harness;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queueenterprise.bench.subject.SubjectRegistry;
import net.openhft.chronicle.core.io.BackgroundResourceReleaser;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * One subject's JVM: the parent ({@link SubjectWorkers}) starts one per subject (and per
 * {@code --jvm}), so no subject's classes or type profiles reach another subject's call sites and
 * no subject pays for what another left behind (Chronicle's background unmapping, garbage).
 * Line protocol on stdin/stdout, JSON payloads:
 * <pre>
 *   (start)                              -> HELLO {jvm}
 *   CONFIG {BenchConfig}                 -> OK
 *   RUN subject size rate warmupS durS   -> RESULT {result, pinning}  |  ERROR message
 *   QUIESCE                              -> OK   (GC, Chronicle's pending releases, a pause)
 *   EXIT
 * </pre>
 */
public final class SubjectWorker {

    /** What a RUN answers. */
    public record Reply(RunResult result, Map<String, String> pinning) {
    }

    static ObjectMapper mapper() {
        return new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    }

    private SubjectWorker() {
    }

    /**
     * Whether a line of the worker's stdout is one of its replies. The JVM writes its own log lines
     * there too (a JFR sampler's "[54.5s][error][jfr] Thread method sampler crashed" once stood in
     * for a RUN's result and failed the bench), so only the protocol's words count.
     */
    static boolean isReply(String line) {
        for (String word : new String[]{"HELLO ", "RESULT ", "ERROR "}) {
            if (line.startsWith(word)) {
                return true;
            }
        }
        return line.equals("OK");
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err); // libraries that print must not disturb the protocol
        ObjectMapper json = mapper();
        out.println("HELLO " + json.writeValueAsString(Environment.jvm()));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        BenchConfig config = null;
        Pinning pinning = null;
        RemoteConsumerProcess child = null;
        try {
            String line;
            while ((line = in.readLine()) != null) {
                int space = line.indexOf(' ');
                String op = space < 0 ? line.trim() : line.substring(0, space);
                String rest = space < 0 ? "" : line.substring(space + 1);
                try {
                    switch (op) {
                        case "EXIT" -> {
                            return;
                        }
                        case "CONFIG" -> {
                            config = json.readValue(rest, BenchConfig.class);
                            pinning = new Pinning(config.pin);
                            if (config.consumerProcess && child == null) {
                                child = new RemoteConsumerProcess(config.pin);
                                OpenLoopRun.useRemoteConsumer(child);
                            }
                            out.println("OK");
                        }
                        case "RUN" -> {
                            String[] a = rest.trim().split(" ");
                            RunResult r = OpenLoopRun.run(SubjectRegistry.get(a[0]), Integer.parseInt(a[1]),
                                    Double.parseDouble(a[2]), Double.parseDouble(a[3]), Double.parseDouble(a[4]),
                                    config, pinning);
                            out.println("RESULT " + json.writeValueAsString(new Reply(r, pinning.info().threads())));
                        }
                        case "QUIESCE" -> {
                            quiesce(config == null ? 0 : config.quiesceSeconds);
                            out.println("OK");
                        }
                        default -> out.println("ERROR unknown command: " + line);
                    }
                } catch (Exception | Error e) {
                    out.println("ERROR " + String.valueOf(e).replace('\n', ' '));
                }
            }
        } finally {
            OpenLoopRun.useRemoteConsumer(null);
            if (child != null) {
                child.close();
            }
        }
    }

    /** Leaves nothing of the last run to land on the next: garbage, Chronicle's deferred unmapping. */
    static void quiesce(double seconds) throws InterruptedException {
        System.gc();
        BackgroundResourceReleaser.releasePendingResources();
        Thread.sleep(Math.round(seconds * 1000));
    }
}
