package io.queueenterprise.operator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** A failover in progress (phase other than COMPLETED), or the last one. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class FailoverStatus {
    /** Where a failover is; each phase is recorded before the step it names is taken. */
    public enum Phase { FENCING, PROMOTING, REPOINTING, COMPLETED }

    private Phase phase;

    @JsonPropertyDescription("The term this failover issued")
    private Long term;

    @JsonPropertyDescription("The leader that was lost")
    private String formerLeader;

    @JsonPropertyDescription("The replica being promoted")
    private String candidate;

    @JsonPropertyDescription("RFC 3339")
    private String startedAt;

    @JsonPropertyDescription("When the operator found the leader lost: the start of the reconcile that planned this"
        + " election (RFC 3339)")
    private String detectedAt;

    @JsonPropertyDescription("True for a planned handover from a live leader (rolling update's switchover)")
    private Boolean planned;

    public String getDetectedAt() {
        return detectedAt;
    }

    public void setDetectedAt(String detectedAt) {
        this.detectedAt = detectedAt;
    }

    public Boolean getPlanned() {
        return planned;
    }

    public void setPlanned(Boolean planned) {
        this.planned = planned;
    }

    public Phase getPhase() {
        return phase;
    }

    public void setPhase(Phase phase) {
        this.phase = phase;
    }

    public Long getTerm() {
        return term;
    }

    public void setTerm(Long term) {
        this.term = term;
    }

    public String getFormerLeader() {
        return formerLeader;
    }

    public void setFormerLeader(String formerLeader) {
        this.formerLeader = formerLeader;
    }

    public String getCandidate() {
        return candidate;
    }

    public void setCandidate(String candidate) {
        this.candidate = candidate;
    }

    public String getStartedAt() {
        return startedAt;
    }

    public void setStartedAt(String startedAt) {
        this.startedAt = startedAt;
    }
}
