package io.queueenterprise.operator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One queue on one replica. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class QueueProgress {
    private String name;

    @JsonPropertyDescription("LIVE, CATCHING_UP, BEHIND_RETENTION, DISK_FULL, CORRUPTED, STOPPED")
    private String state;

    @JsonPropertyDescription("Last index held with everything before it; -1 when empty")
    private Long durableIndex;

    @JsonPropertyDescription("Leader's last index minus this replica's durable index, as the leader reports it")
    private Long lagExcerpts;

    @JsonPropertyDescription("Why the queue is in its state, in the node's words; absent when there is nothing to say")
    private String detail;

    @JsonPropertyDescription("Folders of excerpts this replica moved aside (never served nor deleted by the node); absent when none")
    private Long quarantines;

    @JsonPropertyDescription("The newest quarantine: reason, time, excerpts and folder; absent when none")
    private String lastQuarantine;

    public QueueProgress() {
    }

    public QueueProgress(String name, String state, Long durableIndex, Long lagExcerpts) {
        this.name = name;
        this.state = state;
        this.durableIndex = durableIndex;
        this.lagExcerpts = lagExcerpts;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public String getState() {
        return state;
    }

    public void setState(String state) {
        this.state = state;
    }

    public Long getDurableIndex() {
        return durableIndex;
    }

    public void setDurableIndex(Long durableIndex) {
        this.durableIndex = durableIndex;
    }

    public Long getLagExcerpts() {
        return lagExcerpts;
    }

    public void setLagExcerpts(Long lagExcerpts) {
        this.lagExcerpts = lagExcerpts;
    }

    public String getDetail() {
        return detail;
    }

    public void setDetail(String detail) {
        this.detail = detail;
    }

    public Long getQuarantines() {
        return quarantines;
    }

    public void setQuarantines(Long quarantines) {
        this.quarantines = quarantines;
    }

    public String getLastQuarantine() {
        return lastQuarantine;
    }

    public void setLastQuarantine(String lastQuarantine) {
        this.lastQuarantine = lastQuarantine;
    }
}
