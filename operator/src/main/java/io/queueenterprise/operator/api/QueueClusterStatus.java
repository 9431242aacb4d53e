package io.queueenterprise.operator.api;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.kubernetes.api.model.Condition;

/**
 * What the operator observed and decided. {@code term} is the highest leadership term the operator ever issued for
 * this cluster; it is written here before any node is asked to act on it, so a term is never issued twice, even
 * across operator restarts.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class QueueClusterStatus {
    @JsonPropertyDescription("metadata.generation this status describes")
    private Long observedGeneration;

    @JsonPropertyDescription("Ready, Pinned, Quorum, Failover (metav1.Condition)")
    private List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription("Node id of the current leader")
    private String leader;

    @JsonPropertyDescription("Highest leadership term issued; recorded before a node acts on it")
    private Long term;

    @JsonPropertyDescription("Each replica as its admin endpoint last reported it")
    private List<ReplicaStatus> replicas = new ArrayList<>();

    @JsonPropertyDescription("A failover in progress, or the last one")
    private FailoverStatus failover;

    @JsonPropertyDescription("The calibration Job of the latest spec.calibration.request and its figures")
    private CalibrationStatus calibration;

    @JsonPropertyDescription("The last failover completed (a lost leader replaced) and how long it took")
    private LastFailover lastFailover;

    public LastFailover getLastFailover() {
        return lastFailover;
    }

    public void setLastFailover(LastFailover lastFailover) {
        this.lastFailover = lastFailover;
    }

    public CalibrationStatus getCalibration() {
        return calibration;
    }

    public void setCalibration(CalibrationStatus calibration) {
        this.calibration = calibration;
    }

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions;
    }

    public String getLeader() {
        return leader;
    }

    public void setLeader(String leader) {
        this.leader = leader;
    }

    public Long getTerm() {
        return term;
    }

    public void setTerm(Long term) {
        this.term = term;
    }

    public List<ReplicaStatus> getReplicas() {
        return replicas;
    }

    public void setReplicas(List<ReplicaStatus> replicas) {
        this.replicas = replicas;
    }

    public FailoverStatus getFailover() {
        return failover;
    }

    public void setFailover(FailoverStatus failover) {
        this.failover = failover;
    }
}
