package io.queueenterprise.operator.api;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One replica as its admin endpoint last reported it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ReplicaStatus {
    @JsonPropertyDescription("Node id (the pod's name)")
    private String name;

    @JsonPropertyDescription("STANDBY, LEADER, FOLLOWER, FENCED; UNREACHABLE when the admin endpoint did not answer")
    private String role;

    @JsonPropertyDescription("Highest term the node persisted")
    private Long term;

    @JsonPropertyDescription("Per queue: durable index and lag behind the leader")
    private List<QueueProgress> queues = new ArrayList<>();

    @JsonPropertyDescription("Cpus_allowed_list the node read from /proc/self/status")
    private String cpusAllowedList;

    @JsonPropertyDescription("Whether the granted cpuset has exactly the requested whole cores")
    private Boolean exclusiveCores;

    @JsonPropertyDescription("This replica's hardware, measured on its pinned cores")
    private Calibration calibration;

    @JsonPropertyDescription("Times the node restarted its embedded Aeron client and driver in place since it started")
    private Long transportRestarts;

    @JsonPropertyDescription("What the node reports wrong now (transport down, a queue needing attention, a stalled writer, a peer it cannot address); absent when nothing")
    private List<String> problems;

    @JsonPropertyDescription("The node's identity public key (Ed25519, base64) the operator pinned: the first key this replica reported (trust on first report), kept until the rotate-node annotation names the replica; its peers take only this key from it")
    private String identityKey;

    public String getIdentityKey() {
        return identityKey;
    }

    public void setIdentityKey(String identityKey) {
        this.identityKey = identityKey;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public String getRole() {
        return role;
    }

    public void setRole(String role) {
        this.role = role;
    }

    public Long getTerm() {
        return term;
    }

    public void setTerm(Long term) {
        this.term = term;
    }

    public List<QueueProgress> getQueues() {
        return queues;
    }

    public void setQueues(List<QueueProgress> queues) {
        this.queues = queues;
    }

    public String getCpusAllowedList() {
        return cpusAllowedList;
    }

    public void setCpusAllowedList(String cpusAllowedList) {
        this.cpusAllowedList = cpusAllowedList;
    }

    public Boolean getExclusiveCores() {
        return exclusiveCores;
    }

    public void setExclusiveCores(Boolean exclusiveCores) {
        this.exclusiveCores = exclusiveCores;
    }

    public Calibration getCalibration() {
        return calibration;
    }

    public void setCalibration(Calibration calibration) {
        this.calibration = calibration;
    }

    public Long getTransportRestarts() {
        return transportRestarts;
    }

    public void setTransportRestarts(Long transportRestarts) {
        this.transportRestarts = transportRestarts;
    }

    public List<String> getProblems() {
        return problems;
    }

    public void setProblems(List<String> problems) {
        this.problems = problems;
    }
}
