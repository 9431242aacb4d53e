package io.queueenterprise.operator.failover;

import com.fasterxml.jackson.databind.JsonNode;

import io.queueenterprise.operator.api.Calibration;

/**
 * A node's {@code qe-calibration/1} document (docs/calibration-json-schema.md) as the figures the operator publishes:
 * the highest plain rate and the highest AES-128-CTR + Poly1305 rate at which the percentile stayed within the bound.
 */
public final class CalibrationReading {
    public static final String SCHEMA = "qe-calibration/1";
    /** The authenticated mode: what an encrypted queue uses by default. */
    static final String ENCRYPTED_SUBJECT = "ctr-poly1305";

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
        calibration.setGrantedCpus(document.at("/cores/granted").isTextual() ? document.at("/cores/granted").asText() : null);
        return calibration;
    }

    /** Null when the subject met the bound at no rate ({@code rate: null}, "unreachable"). */
    private static Long rate(JsonNode document, String subject) {
        JsonNode rate = document.path("subjects").path(subject).path("rate");
        return rate.isNumber() ? rate.asLong() : null;
    }
}
