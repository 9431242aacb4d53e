package io.queueenterprise.operator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** {@code status.calibration}: the calibration Job of the latest {@code spec.calibration.request} and its result. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class CalibrationStatus {
    public enum Phase { Running, Succeeded, Failed }

    @JsonPropertyDescription("The spec.calibration.request this status answers")
    private String request;

    @JsonPropertyDescription("Name of the calibration Job")
    private String job;

    @JsonPropertyDescription("Running, Succeeded (result holds the figures) or Failed (reason and message say why)")
    private Phase phase;

    @JsonPropertyDescription("Why it failed: JobFailed, DeadlineExceeded, InvalidResult")
    private String reason;

    @JsonPropertyDescription("One line for a person")
    private String message;

    @JsonPropertyDescription("The figures of the calibrate document (qe-calibration/1), measured on the pool's granted cores")
    private Calibration result;

    public String getRequest() {
        return request;
    }

    public void setRequest(String request) {
        this.request = request;
    }

    public String getJob() {
        return job;
    }

    public void setJob(String job) {
        this.job = job;
    }

    public Phase getPhase() {
        return phase;
    }

    public void setPhase(Phase phase) {
        this.phase = phase;
    }

    public String getReason() {
        return reason;
    }

    public void setReason(String reason) {
        this.reason = reason;
    }

    public String getMessage() {
        return message;
    }

    public void setMessage(String message) {
        this.message = message;
    }

    public Calibration getResult() {
        return result;
    }

    public void setResult(Calibration result) {
        this.result = result;
    }
}
