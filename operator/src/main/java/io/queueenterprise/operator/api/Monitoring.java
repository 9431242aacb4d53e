package io.queueenterprise.operator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;

/** Prometheus scraping of the nodes' metrics port. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Monitoring {
    @Default("false")
    @JsonPropertyDescription("Create a PodMonitor (needs the Prometheus Operator's CRDs)")
    private Boolean podMonitor = false;

    public Boolean getPodMonitor() {
        return podMonitor;
    }

    public void setPodMonitor(Boolean podMonitor) {
        this.podMonitor = podMonitor;
    }
}
