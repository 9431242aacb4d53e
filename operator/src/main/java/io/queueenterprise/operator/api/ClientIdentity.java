package io.queueenterprise.operator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * A remote client with an identity of its own (docs/remote-clients.md, "Per-client identity"): the operator makes its
 * key pair in the Secret {@code <cluster>-client-<name>} and names its public key in every node's authorised clients.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ClientIdentity {
    @Required
    @Size(min = 1, max = 63)
    @Pattern("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    @JsonPropertyDescription("Client name (a DNS label, as queue names are): the name it connects as, and the suffix of"
        + " its key pair's Secret <cluster>-client-<name>.")
    private String name;

    public ClientIdentity() {
    }

    public ClientIdentity(String name) {
        this.name = name;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }
}
