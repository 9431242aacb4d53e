package io.queueenterprise.operator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** Cycle files older than {@code maxAge}, or beyond {@code maxBytes} in total, are deleted on every replica. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "has(self.maxAge) || has(self.maxBytes)",
    message = "retention needs maxAge or maxBytes (leave retention out for an unbounded queue)")
public class Retention {
    @Size(max = 16)
    @Pattern("^[1-9][0-9]*(m|h|d)$")
    @JsonPropertyDescription("e.g. 24h, 7d")
    private String maxAge;

    @Size(max = 32)
    @Pattern("^[1-9][0-9]*(Ki|Mi|Gi|Ti)?$")
    @JsonPropertyDescription("e.g. 10Gi")
    private String maxBytes;

    public String getMaxAge() {
        return maxAge;
    }

    public void setMaxAge(String maxAge) {
        this.maxAge = maxAge;
    }

    public String getMaxBytes() {
        return maxBytes;
    }

    public void setMaxBytes(String maxBytes) {
        this.maxBytes = maxBytes;
    }
}
