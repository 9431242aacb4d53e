package io.queueenterprise.operator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The bench's calibrate result for one replica's pinned cores: rates at which p99 stays within the target. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Calibration {
    @JsonPropertyDescription("Highest plain rate (messages/s) with p99 within p99TargetMicros")
    private Long plainMessagesPerSecond;

    @JsonPropertyDescription("Highest encrypted rate (messages/s) with p99 within p99TargetMicros")
    private Long encryptedMessagesPerSecond;

    @JsonPropertyDescription("The latency target, microseconds (10)")
    private Long p99TargetMicros;

    @JsonPropertyDescription("RFC 3339 time of the measurement")
    private String measuredAt;

    public Long getPlainMessagesPerSecond() {
        return plainMessagesPerSecond;
    }

    public void setPlainMessagesPerSecond(Long plainMessagesPerSecond) {
        this.plainMessagesPerSecond = plainMessagesPerSecond;
    }

    public Long getEncryptedMessagesPerSecond() {
        return encryptedMessagesPerSecond;
    }

    public void setEncryptedMessagesPerSecond(Long encryptedMessagesPerSecond) {
        this.encryptedMessagesPerSecond = encryptedMessagesPerSecond;
    }

    public Long getP99TargetMicros() {
        return p99TargetMicros;
    }

    public void setP99TargetMicros(Long p99TargetMicros) {
        this.p99TargetMicros = p99TargetMicros;
    }

    public String getMeasuredAt() {
        return measuredAt;
    }

    public void setMeasuredAt(String measuredAt) {
        this.measuredAt = measuredAt;
    }
}
