package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.ReplicationException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The node's term, role and leader, persisted ({@value #FILE_NAME} in the data directory, fsynced) before the node
 * acts on them, so a term is never accepted twice, even across restarts.
 */
public final class NodeStateFile {
    public static final String FILE_NAME = "replication-node.state";

    /** What was persisted. */
    public record State(long term, NodeStatus.Role role, String leader) {
    }

    private final Path file;

    public NodeStateFile(Path dataDirectory) {
        this.file = dataDirectory.resolve(FILE_NAME);
    }

    public State read() {
        if (!Files.exists(file)) {
            return new State(0, NodeStatus.Role.STANDBY, null);
        }
        Properties p = new Properties();
        try (var in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(in);
            long term = Long.parseLong(p.getProperty("term", "0").strip());
            NodeStatus.Role role = NodeStatus.Role.valueOf(p.getProperty("role", "STANDBY").strip());
            String leader = p.getProperty("leader");
            return new State(term, role, leader == null || leader.isBlank() ? null : leader.strip());
        } catch (IOException | IllegalArgumentException e) {
            throw new ReplicationException(file + " cannot be read (term, role, leader): " + e.getMessage(), e);
        }
    }

    public void write(State state) {
        String text = "# written by the replication node before it acts; do not edit\n"
                + "term=" + state.term() + "\nrole=" + state.role() + "\nleader=" + (state.leader() == null ? "" : state.leader()) + "\n";
        try {
            DurableFiles.write(file, text);
        } catch (IOException e) {
            throw new ReplicationException("cannot persist term " + state.term() + " in " + file + ": " + e.getMessage(), e);
        }
    }
}
