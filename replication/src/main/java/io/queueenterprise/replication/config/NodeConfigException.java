package io.queueenterprise.replication.config;

import io.queueenterprise.replication.ReplicationException;

/**
 * A node-configuration document was refused. The message is one line that names the field by its path in the
 * document and the value found, e.g. {@code queues[1].ackMode: "QUROUM" is not one of ASYNC, REPLICATED_READS,
 * QUORUM}; {@link #field()} is that path alone ({@code ""} for the document as a whole).
 */
public final class NodeConfigException extends ReplicationException {
    private static final long serialVersionUID = 1L;
    private final String field;

    NodeConfigException(String field, String problem) {
        super(field.isEmpty() ? problem : field + ": " + problem);
        this.field = field;
    }

    NodeConfigException(String field, String problem, Throwable cause) {
        super(field.isEmpty() ? problem : field + ": " + problem, cause);
        this.field = field;
    }

    /** The path of the refused field ({@code peers[2].replicationPort}); empty for the document as a whole. */
    public String field() {
        return field;
    }
}
