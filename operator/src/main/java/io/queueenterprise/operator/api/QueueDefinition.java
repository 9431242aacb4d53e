package io.queueenterprise.operator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** One queue every replica hosts. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "self.encryption == 'NONE' || has(self.dataKeySecret)",
    message = "an encrypted queue needs dataKeySecret: the Secret its writers and readers load the data key from",
    fieldPath = ".dataKeySecret")
public class QueueDefinition {
    @Required
    @Size(min = 1, max = 63)
    @Pattern("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    @JsonPropertyDescription("Queue name (a DNS label); the queue's directory on every replica.")
    private String name;

    @Required
    @JsonPropertyDescription("How often a new cycle file starts (immutable).")
    private RollCycle rollCycle;

    @Required
    @JsonPropertyDescription("Cipher mode of the queue (immutable); writers seal, nodes never see plaintext.")
    private Encryption encryption;

    @Size(max = 253)
    @JsonPropertyDescription("Secret with the queue's data key, for the clients that seal and open; nodes never read it.")
    private String dataKeySecret;

    @JsonPropertyDescription("Overrides the cluster's ackMode for this queue.")
    private AckMode ackMode;

    @Size(max = 16)
    @Pattern("^[1-9][0-9]*(ms|s|m)$")
    @JsonPropertyDescription("How long a quorum-mode appender waits before a typed timeout error (e.g. 1s).")
    private String ackTimeout;

    @JsonPropertyDescription("Cycle files older or beyond this are deleted on every replica; unbounded when absent.")
    private Retention retention;

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public RollCycle getRollCycle() {
        return rollCycle;
    }

    public void setRollCycle(RollCycle rollCycle) {
        this.rollCycle = rollCycle;
    }

    public Encryption getEncryption() {
        return encryption;
    }

    public void setEncryption(Encryption encryption) {
        this.encryption = encryption;
    }

    public String getDataKeySecret() {
        return dataKeySecret;
    }

    public void setDataKeySecret(String dataKeySecret) {
        this.dataKeySecret = dataKeySecret;
    }

    public AckMode getAckMode() {
        return ackMode;
    }

    public void setAckMode(AckMode ackMode) {
        this.ackMode = ackMode;
    }

    public String getAckTimeout() {
        return ackTimeout;
    }

    public void setAckTimeout(String ackTimeout) {
        this.ackTimeout = ackTimeout;
    }

    public Retention getRetention() {
        return retention;
    }

    public void setRetention(Retention retention) {
        this.retention = retention;
    }
}
