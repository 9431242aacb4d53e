package io.queueenterprise.operator.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.queueenterprise.operator.api.Calibration;

/** The figures published from a node's qe-calibration/1 document: the example in docs/calibration-json-schema.md. */
class CalibrationReadingTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode documentedExample() throws IOException {
        String page = Files.readString(Path.of(System.getProperty("qe.examples.dir", "../examples"), "..", "docs", "calibration-json-schema.md"));
        Matcher json = Pattern.compile("```json\\n(.*?)```", Pattern.DOTALL).matcher(page);
        if (!json.find()) {
            throw new AssertionError("no JSON example in docs/calibration-json-schema.md");
        }
        return JSON.readTree(json.group(1));
    }

    @Test
    void theDocumentedExampleIsReadAsUnreachableOnThatMachine() throws IOException {
        JsonNode example = documentedExample();
        Calibration calibration = CalibrationReading.read(example);
        assertEquals(example.at("/subjects/plain/rate").isNull() ? null : example.at("/subjects/plain/rate").asLong(),
            calibration.getPlainMessagesPerSecond());
        assertEquals(example.get("verdict").asText(), calibration.getVerdict());
        assertEquals(10L, calibration.getP99TargetMicros());
        assertEquals(example.get("time").asText(), calibration.getMeasuredAt());
        assertEquals("0-1", calibration.getGrantedCpus());
    }

    @Test
    void ratesAreThePlainAndTheAuthenticatedEncryptedSubjects() throws IOException {
        ObjectNode document = (ObjectNode) documentedExample();
        ((ObjectNode) document.at("/subjects/plain")).put("rate", 1_500_000);
        ((ObjectNode) document.at("/subjects/ctr")).put("rate", 1_000_000);
        ((ObjectNode) document.at("/subjects/ctr-poly1305")).put("rate", 800_000);
        Calibration calibration = CalibrationReading.read(document);
        assertEquals(1_500_000L, calibration.getPlainMessagesPerSecond());
        assertEquals(800_000L, calibration.getEncryptedMessagesPerSecond());
    }

    @Test
    void anotherSchemaIsNotRead() throws IOException {
        ObjectNode document = (ObjectNode) documentedExample();
        document.put("schema", "qe-calibration/2");
        assertNull(CalibrationReading.read(document));
        assertNull(CalibrationReading.read(null));
    }
}
