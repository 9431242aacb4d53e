package io.queueenterprise.operator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** Each replica's persistent volume (a volumeClaimTemplate). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class StorageSpec {
    @Required
    @Size(max = 32)
    @Pattern("^[1-9][0-9]*(Mi|Gi|Ti)$")
    @JsonPropertyDescription("Volume size, e.g. 50Gi")
    private String size;

    @Size(max = 253)
    @JsonPropertyDescription("StorageClass; the cluster's default when absent. Local NVMe suits a queue best.")
    private String storageClassName;

    public String getSize() {
        return size;
    }

    public void setSize(String size) {
        this.size = size;
    }

    public String getStorageClassName() {
        return storageClassName;
    }

    public void setStorageClassName(String storageClassName) {
        this.storageClassName = storageClassName;
    }
}
