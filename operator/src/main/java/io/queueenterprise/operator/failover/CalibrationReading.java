package io.queueenterprise.operator.failover;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.queueenterprise.operator.api.Calibration;

/**
 * A node's {@code qe-calibration/1} document (docs/calibration-json-schema.md) as the figures the operator publishes:
 * the highest plain rate and the highest AES-128-CTR + Poly1305 rate at which the percentile stayed within the bound.
 */
public final class CalibrationReading {
    public static final String SCHEMA = "qe-calibration/1";
    /** The authenticated mode: what an encrypted queue uses by default. */
    static final String ENCRYPTED_SUBJECT = "ctr-poly1305";
    /** The document's size limit (docs/calibration-json-schema.md); also the kubelet's termination-message limit. */
    public static final int MAX_DOCUMENT_BYTES = 4096;
    private static final List<String> SUBJECTS = List.of("plain", "ctr", ENCRYPTED_SUBJECT);
    private static final Set<String> VERDICTS = Set.of("ok", "unreachable", "time-limit");
    private static final Set<String> SUBJECT_STATUSES = Set.of("ok", "at-max-rate", "unreachable", "time-limit");
    private static final ObjectMapper JSON = new ObjectMapper();

    private CalibrationReading() {
    }

    /** Null when there is no document or it is of another schema (its fields would mean something else). */
    public static Calibration read(JsonNode document) {
        if (document == null || !SCHEMA.equals(document.path("schema").asText())) {
            return null;
        }
        Calibration calibration = new Calibration();
        calibration.setPlainMessagesPerSecond(rate(document, "plain"));
        calibration.setEncryptedMessagesPerSecond(rate(document, ENCRYPTED_SUBJECT));
        calibration.setP99TargetMicros(document.path("boundUs").isNumber() ? Math.round(document.get("boundUs").asDouble()) : null);
        calibration.setMeasuredAt(document.path("time").isTextual() ? document.get("time").asText() : null);
        calibration.setVerdict(document.path("verdict").isTextual() ? document.get("verdict").asText() : null);
        calibration.setHeldBoundMicros(document.path("heldBoundUs").isNumber() ? document.get("heldBoundUs").asLong() : null);
        calibration.setGrantedCpus(document.at("/cores/granted").isTextual() ? document.at("/cores/granted").asText() : null);
        return calibration;
    }

    /** A document that is not a qe-calibration/1 result; the message is one line naming what is wrong. */
    public static final class InvalidCalibrationException extends Exception {
        private static final long serialVersionUID = 1L;

        public InvalidCalibrationException(String message) {
            super(message);
        }
    }

    /**
     * The figures of a calibration Job's termination message, after checking it against docs/calibration-json-schema.md
     * (size, schema, verdict, every subject's status and rate): a truncated or foreign document is refused rather than
     * published as figures.
     */
    public static Calibration parse(String text) throws InvalidCalibrationException {
        if (text == null || text.isBlank()) {
            throw new InvalidCalibrationException("no calibration document (empty termination message)");
        }
        int bytes = text.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_DOCUMENT_BYTES) {
            throw new InvalidCalibrationException("calibration document of " + bytes + " bytes exceeds " + MAX_DOCUMENT_BYTES);
        }
        JsonNode document;
        try {
            document = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new InvalidCalibrationException("calibration document is not JSON: " + e.getOriginalMessage());
        }
        if (document == null || !document.isObject()) {
            throw new InvalidCalibrationException("calibration document is not a JSON object");
        }
        if (!SCHEMA.equals(document.path("schema").asText())) {
            throw new InvalidCalibrationException("calibration document has schema " + document.path("schema")
                + ", expected \"" + SCHEMA + "\"");
        }
        require(document.path("time").isTextual(), "time is not a string");
        require(document.path("boundUs").isNumber() && document.get("boundUs").asDouble() > 0, "boundUs is not a positive number");
        require(document.path("percentile").isNumber(), "percentile is not a number");
        require(document.at("/cores/granted").isTextual(), "cores.granted is not a string");
        require(VERDICTS.contains(document.path("verdict").asText()), "verdict " + document.path("verdict")
            + " is not one of " + VERDICTS);
        for (String subject : SUBJECTS) {
            JsonNode figure = document.path("subjects").path(subject);
            require(figure.isObject(), "subjects." + subject + " is missing");
            String status = figure.path("status").asText();
            require(SUBJECT_STATUSES.contains(status), "subjects." + subject + ".status " + figure.path("status")
                + " is not one of " + SUBJECT_STATUSES);
            JsonNode rate = figure.path("rate");
            require(rate.isNull() || (rate.canConvertToLong() && rate.isIntegralNumber() && rate.asLong() > 0),
                "subjects." + subject + ".rate " + rate + " is neither a positive integer nor null");
            require(!"unreachable".equals(status) || rate.isNull(),
                "subjects." + subject + " is unreachable but has rate " + rate);
        }
        return read(document);
    }

    private static void require(boolean condition, String problem) throws InvalidCalibrationException {
        if (!condition) {
            throw new InvalidCalibrationException("calibration document: " + problem);
        }
    }

    /** Null when the subject met the bound at no rate ({@code rate: null}, "unreachable"). */
    private static Long rate(JsonNode document, String subject) {
        JsonNode rate = document.path("subjects").path(subject).path("rate");
        return rate.isNumber() ? rate.asLong() : null;
    }
}
