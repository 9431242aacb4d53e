package io.queueenterprise.operator.api;

import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The client pods the NetworkPolicy admits (both selectors must match when both are given). */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public class AuthorizedClients {
    @JsonPropertyDescription("Labels of client pods")
    private Map<String, String> podSelector = new LinkedHashMap<>();

    @JsonPropertyDescription("Labels of the client pods' namespaces; this namespace only when empty")
    private Map<String, String> namespaceSelector = new LinkedHashMap<>();

    public Map<String, String> getPodSelector() {
        return podSelector;
    }

    public void setPodSelector(Map<String, String> podSelector) {
        this.podSelector = podSelector;
    }

    public Map<String, String> getNamespaceSelector() {
        return namespaceSelector;
    }

    public void setNamespaceSelector(Map<String, String> namespaceSelector) {
        this.namespaceSelector = namespaceSelector;
    }
}
