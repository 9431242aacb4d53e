package io.queueenterprise.operator.api;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.kubernetes.api.model.Toleration;

/** The tuned node pool: nodes whose kubelet runs the static CPU manager (docs/operator.md). */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public class NodePool {
    @JsonPropertyDescription("Labels of the tuned pool's nodes, e.g. queue-enterprise.io/pool: tuned")
    private Map<String, String> nodeSelector = new LinkedHashMap<>();

    @JsonPropertyDescription("Tolerations for the pool's taints (a tuned pool is usually tainted for us alone).")
    private List<Toleration> tolerations = new ArrayList<>();

    public Map<String, String> getNodeSelector() {
        return nodeSelector;
    }

    public void setNodeSelector(Map<String, String> nodeSelector) {
        this.nodeSelector = nodeSelector;
    }

    public List<Toleration> getTolerations() {
        return tolerations;
    }

    public void setTolerations(List<Toleration> tolerations) {
        this.tolerations = tolerations;
    }
}
