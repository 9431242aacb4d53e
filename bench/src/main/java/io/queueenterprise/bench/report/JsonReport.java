package io.queueenterprise.bench.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.queueenterprise.bench.harness.BenchResult;

import java.io.IOException;
import java.nio.file.Path;

/** Writes {@link BenchResult} as JSON (schema: docs/bench-json-schema.md). */
public final class JsonReport {
    private JsonReport() {
    }

    public static ObjectMapper mapper() {
        return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }

    public static void write(BenchResult result, Path file) throws IOException {
        mapper().writeValue(file.toFile(), result);
    }
}
