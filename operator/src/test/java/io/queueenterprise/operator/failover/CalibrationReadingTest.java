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
@org.junit.jupiter.api.Tag("unit")
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

    @Test
    void aTerminationMessageIsValidatedBeforeItsFiguresArePublished() throws Exception {
        ObjectNode document = (ObjectNode) documentedExample();
        Calibration unreachable = CalibrationReading.parse(JSON.writeValueAsString(document));
        assertEquals("unreachable", unreachable.getVerdict());
        assertNull(unreachable.getPlainMessagesPerSecond(), "unreachable: no rate, not zero");
        ((ObjectNode) document.at("/subjects/plain")).put("status", "ok").put("rate", 1_500_000);
        ((ObjectNode) document.at("/subjects/ctr-poly1305")).put("status", "ok").put("rate", 800_000);
        Calibration measured = CalibrationReading.parse(JSON.writeValueAsString(document));
        assertEquals(1_500_000L, measured.getPlainMessagesPerSecond());
        assertEquals(800_000L, measured.getEncryptedMessagesPerSecond());
    }

    @Test
    void aBrokenTerminationMessageIsRefusedWithOneLineNamingWhatIsWrong() throws Exception {
        String good = JSON.writeValueAsString(documentedExample());
        assertRefused(null, "empty termination message");
        assertRefused(good.substring(0, good.length() / 2), "not JSON");
        assertRefused(good.replace("qe-calibration/1", "qe-calibration/2"), "schema");
        assertRefused(good.replace("\"verdict\":\"unreachable\"", "\"verdict\":\"fine\""), "verdict");
        ObjectNode negative = (ObjectNode) documentedExample();
        ((ObjectNode) negative.at("/subjects/ctr")).put("status", "ok").put("rate", -5);
        assertRefused(JSON.writeValueAsString(negative), "subjects.ctr.rate");
        ObjectNode contradicting = (ObjectNode) documentedExample();
        ((ObjectNode) contradicting.at("/subjects/plain")).put("rate", 1000);
        assertRefused(JSON.writeValueAsString(contradicting), "subjects.plain is unreachable but has rate");
        ObjectNode missing = (ObjectNode) documentedExample();
        ((ObjectNode) missing.get("subjects")).remove("ctr-poly1305");
        assertRefused(JSON.writeValueAsString(missing), "subjects.ctr-poly1305 is missing");
        ObjectNode large = (ObjectNode) documentedExample();
        large.put("padding", "x".repeat(CalibrationReading.MAX_DOCUMENT_BYTES));
        assertRefused(JSON.writeValueAsString(large), "exceeds 4096");
    }

    private static void assertRefused(String text, String expected) {
        CalibrationReading.InvalidCalibrationException refused = org.junit.jupiter.api.Assertions.assertThrows(
            CalibrationReading.InvalidCalibrationException.class, () -> CalibrationReading.parse(text));
        org.junit.jupiter.api.Assertions.assertTrue(refused.getMessage().contains(expected), refused.getMessage());
        org.junit.jupiter.api.Assertions.assertFalse(refused.getMessage().contains("\n"), "one line: " + refused.getMessage());
    }
}
