package io.queueenterprise.operator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The bench's calibrate result (qe-calibration/1) for one replica's pinned cores: rates at which p99 stays within the target. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Calibration {
    @JsonPropertyDescription("Highest plain rate (messages/s) with p99 within p99TargetMicros; absent when none held it")
    private Long plainMessagesPerSecond;

    @JsonPropertyDescription("Highest encrypted rate (messages/s) with p99 within p99TargetMicros")
    private Long encryptedMessagesPerSecond;

    @JsonPropertyDescription("The latency target, microseconds (10)")
    private Long p99TargetMicros;

    @JsonPropertyDescription("RFC 3339 time of the measurement")
    private String measuredAt;

    @JsonPropertyDescription("ok, unreachable (this hardware, as loaded, held the bound at no rate) or time-limit")
    private String verdict;

    @JsonPropertyDescription("When the verdict is not ok: the smallest bound (microseconds) of calibrate's ladder at which"
        + " every subject held a rate; absent when none")
    private Long heldBoundMicros;

    @JsonPropertyDescription("The cpus the measurement ran on (Cpus_allowed_list)")
    private String grantedCpus;

    public String getVerdict() {
        return verdict;
    }

    public void setVerdict(String verdict) {
        this.verdict = verdict;
    }

    public Long getHeldBoundMicros() {
        return heldBoundMicros;
    }

    public void setHeldBoundMicros(Long heldBoundMicros) {
        this.heldBoundMicros = heldBoundMicros;
    }

    public String getGrantedCpus() {
        return grantedCpus;
    }

    public void setGrantedCpus(String grantedCpus) {
        this.grantedCpus = grantedCpus;
    }

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
