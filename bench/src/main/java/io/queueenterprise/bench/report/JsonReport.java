package io.queueenterprise.bench.report;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queueenterprise.bench.harness.BenchResult;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Writes {@link BenchResult} as JSON (schema: docs/bench-json-schema.md): {@code bench.json} with
 * everything, and {@code summary.json}, the compact form kept in docs/perf-data that the report
 * and charts are regenerated from ({@code qe bench --report-from}).
 */
public final class JsonReport {
    private JsonReport() {
    }

    public static ObjectMapper mapper() {
        return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    }

    public static void write(BenchResult result, Path file) throws IOException {
        mapper().writeValue(file.toFile(), result);
    }

    /**
     * The summary: the same document without what only a debugging reader needs and what names the
     * machine's paths: every point keeps its worst run's figures but not the individual runs; no
     * JLBH printout, no JVM command line with its class path, the flag file by name only.
     */
    public static void writeSummary(BenchResult result, Path file) throws IOException {
        ObjectMapper m = new ObjectMapper();
        ObjectNode root = m.valueToTree(result);
        for (JsonNode r : root.withArray("results")) {
            for (JsonNode p : r.withArray("points")) {
                ((ObjectNode) p).remove("runs");
            }
        }
        if (root.get("jlbhCrossCheck") instanceof ObjectNode j) {
            j.remove("jlbhOutput");
            if (j.get("harness") instanceof ObjectNode h) {
                h.remove("runs");
            }
        }
        if (root.get("provenance") instanceof ObjectNode prov) {
            prov.remove("javaCommandLine");
        }
        if (root.get("jvm") instanceof ObjectNode jvm) {
            withoutPaths(jvm);
        }
        if (root.get("subjectJvms") instanceof ObjectNode jvms) {
            jvms.properties().forEach(e -> {
                if (e.getValue() instanceof ObjectNode j) {
                    withoutPaths(j);
                }
            });
        }
        m.writeValue(file.toFile(), root);
    }

    private static final String ARGS_FILE_PROPERTY = "-Dqe.jvm.args.file=";

    /** The flag file by name (bin/jvm.args sits wherever the repository was checked out). */
    private static void withoutPaths(ObjectNode jvm) {
        if (jvm.hasNonNull("jvmArgsFile")) {
            jvm.put("jvmArgsFile", Path.of(jvm.get("jvmArgsFile").asText()).getFileName().toString());
        }
        if (jvm.get("inputArguments") instanceof com.fasterxml.jackson.databind.node.ArrayNode args) {
            for (int i = 0; i < args.size(); i++) {
                String a = args.get(i).asText();
                if (a.startsWith(ARGS_FILE_PROPERTY)) {
                    args.set(i, ARGS_FILE_PROPERTY + Path.of(a.substring(ARGS_FILE_PROPERTY.length())).getFileName());
                }
            }
        }
    }

    /** Reads a bench.json or summary.json back (fields a summary leaves out come back null). */
    public static BenchResult read(Path file) throws IOException {
        return mapper().readValue(file.toFile(), BenchResult.class);
    }
}
