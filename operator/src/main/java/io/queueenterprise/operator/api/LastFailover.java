package io.queueenterprise.operator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * The last failover the operator completed (a lost leader replaced; a rolling update's planned switchover is not
 * one), and how long it took: from the start of the reconcile that found the leader lost to the reconcile that put
 * the new leader in status.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class LastFailover {
    @JsonPropertyDescription("Seconds from the leader found lost (the start of the reconcile that planned the election)"
        + " to the new leader in status")
    private Double durationSeconds;

    @JsonPropertyDescription("When the new leader was put in status (RFC 3339)")
    private String at;

    @JsonPropertyDescription("The leader that was lost")
    private String from;

    @JsonPropertyDescription("The replica that leads since")
    private String to;

    @JsonPropertyDescription("The term the failover issued")
    private Long term;

    public LastFailover() {
    }

    public LastFailover(Double durationSeconds, String at, String from, String to, Long term) {
        this.durationSeconds = durationSeconds;
        this.at = at;
        this.from = from;
        this.to = to;
        this.term = term;
    }

    public Double getDurationSeconds() {
        return durationSeconds;
    }

    public void setDurationSeconds(Double durationSeconds) {
        this.durationSeconds = durationSeconds;
    }

    public String getAt() {
        return at;
    }

    public void setAt(String at) {
        this.at = at;
    }

    public String getFrom() {
        return from;
    }

    public void setFrom(String from) {
        this.from = from;
    }

    public String getTo() {
        return to;
    }

    public void setTo(String to) {
        this.to = to;
    }

    public Long getTerm() {
        return term;
    }

    public void setTerm(Long term) {
        this.term = term;
    }
}
