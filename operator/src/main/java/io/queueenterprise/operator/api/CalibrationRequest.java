package io.queueenterprise.operator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * {@code spec.calibration}: asks the operator to measure the hardware with the bench's {@code calibrate}, in one or both
 * of two ways that never disturb a serving queue: a {@code request} token runs a Job on the replicas' pool with the
 * replicas' whole cores (a new token asks again; the same token never runs twice); {@code atFirstStart} runs it in each
 * replica's pod, as an init container on the pod's own pinned cores, before the node starts.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "has(self.request) || (has(self.atFirstStart) && self.atFirstStart)",
    message = "calibration needs a request token (a calibration Job) or atFirstStart: true (each replica measures its"
        + " cores before serving)")
@ValidationRule(value = "self.warmupSeconds + self.durationSeconds <= self.timeLimitSeconds",
    message = "calibration.timeLimitSeconds must leave room for one warm-up and one recorded run"
        + " (warmupSeconds + durationSeconds): a shorter limit measures nothing", fieldPath = ".timeLimitSeconds")
public class CalibrationRequest {
    @Size(min = 1, max = 63)
    @Pattern("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    @JsonPropertyDescription("Token of this request (e.g. a date or a counter); changing it runs a new calibration Job."
        + " A label value: lower-case letters, digits and '-'.")
    private String request;

    @Default("false")
    @JsonPropertyDescription("Each replica's pod first runs calibrate as an init container on the pod's own exclusive"
        + " cores, before the node starts (bounded by timeLimitSeconds; at every new pod, not at container restarts);"
        + " the operator publishes the result in status.replicas[].calibration. A calibrate that fails keeps its pod"
        + " from starting (the kubelet retries it): turn this off to serve without it.")
    private Boolean atFirstStart = false;

    @Min(10)
    @Max(3600)
    @Default("300")
    @JsonPropertyDescription("Seconds after which calibrate starts no new measurement (its --time-limit); the Job's"
        + " activeDeadlineSeconds adds room for the JVMs' start and warm-up.")
    private Integer timeLimitSeconds = 300;

    @Min(1)
    @Max(60)
    @Default("1")
    @JsonPropertyDescription("Recorded seconds per run (calibrate --duration).")
    private Integer durationSeconds = 1;

    @Min(0)
    @Max(60)
    @Default("2")
    @JsonPropertyDescription("JIT warm-up seconds per subject (calibrate --warmup).")
    private Integer warmupSeconds = 2;

    @Size(max = 512)
    @JsonPropertyDescription("Bench image; defaults to the operator's QE_CALIBRATION_IMAGE.")
    private String image;

    public String getRequest() {
        return request;
    }

    public void setRequest(String request) {
        this.request = request;
    }

    public Boolean getAtFirstStart() {
        return atFirstStart;
    }

    public void setAtFirstStart(Boolean atFirstStart) {
        this.atFirstStart = atFirstStart;
    }

    public Integer getTimeLimitSeconds() {
        return timeLimitSeconds;
    }

    public void setTimeLimitSeconds(Integer timeLimitSeconds) {
        this.timeLimitSeconds = timeLimitSeconds;
    }

    public Integer getDurationSeconds() {
        return durationSeconds;
    }

    public void setDurationSeconds(Integer durationSeconds) {
        this.durationSeconds = durationSeconds;
    }

    public Integer getWarmupSeconds() {
        return warmupSeconds;
    }

    public void setWarmupSeconds(Integer warmupSeconds) {
        this.warmupSeconds = warmupSeconds;
    }

    public String getImage() {
        return image;
    }

    public void setImage(String image) {
        this.image = image;
    }
}
