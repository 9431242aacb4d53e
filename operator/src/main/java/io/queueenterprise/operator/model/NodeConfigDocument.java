package io.queueenterprise.operator.model;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The operator's own view of the node-configuration document, schema version 1 (docs/node-contract.md,
 * examples/node-config/): field names and order as the node reads them. The operator does not depend on the node's
 * classes (no Chronicle or Aeron here); {@code NodeConfigDocumentTest} keeps the two in step through the example
 * files both sides test against. Absent optional fields are left out, as the examples do.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record NodeConfigDocument(int version, String nodeId, String dataDirectory, List<Peer> peers,
                                 String peerCredentialFile, String identityKeyFile, Boolean drawIdentityKeyIfAbsent,
                                 String peerIdentitiesFile, String clientCredentialFile, String writeKeyDirectory,
                                 String authorisedClientsFile, List<Queue> queues, Admin admin, Metrics metrics,
                                 String idleStrategy) {
    public static final int SCHEMA_VERSION = 1;

    public NodeConfigDocument {
        peers = List.copyOf(peers);
        queues = List.copyOf(queues);
    }

    /**
     * A replica, where its replication endpoint listens (UDP, Aeron) and, when the cluster serves remote clients
     * (a client-credential Secret is set), where its client gateway listens; null otherwise.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Peer(String id, String host, int replicationPort, Integer clientPort) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Queue(String name, String rollCycle, String encryption, String ackMode, String ackTimeout,
                        Retention retention) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Retention(String maxAge, String maxBytes) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Admin(String bindAddress, int port, String credentialFile) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Metrics(String bindAddress, int port) {
    }
}
