package io.queueenterprise.replication.node;

import io.queueenterprise.replication.NodeControl;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.StaleTermException;
import io.queueenterprise.replication.config.NodeConfig;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A stand-in for the replication engine, for the tests of the layer around it only (admin endpoint, metrics,
 * health, retention): it keeps role and term by the contract's rules and reports what the test sets. Nothing of
 * replication is exercised here; the end-to-end tests run the real engine.
 */
public final class FakeNodeControl implements NodeControl {
    private final NodeConfig config;
    private NodeStatus.Role role = NodeStatus.Role.STANDBY;
    private long term;
    private String leader;
    private final Map<String, QueueStatus> queues = new HashMap<>();
    private final Map<String, Histogram> ackLatency = new HashMap<>();
    boolean closed;

    public FakeNodeControl(NodeConfig config) {
        this.config = config;
        for (NodeConfig.QueueSpec q : config.queues()) {
            queues.put(q.name(), new QueueStatus(q.name(), QueueStatus.State.STOPPED, -1, -1, -1, -1, List.of(), 0, 0));
            ackLatency.put(q.name(), new Histogram(3));
        }
    }

    synchronized void setQueue(QueueStatus status) {
        queues.put(status.name(), status);
    }

    synchronized void recordAckLatency(String queue, long nanos) {
        ackLatency.get(queue).recordValue(nanos);
    }

    @Override
    public synchronized NodeStatus status() {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        List<QueueStatus> list = new ArrayList<>();
        for (NodeConfig.QueueSpec q : config.queues()) {
            list.add(queues.get(q.name()));
        }
        return new NodeStatus(config.nodeId(), role, term, leader, list);
    }

    @Override
    public synchronized void promote(long term) {
        // as the node (RoleController): a higher term, or the term it was fenced at
        if (term < this.term || (term == this.term && !(role == NodeStatus.Role.FENCED && leader == null))) {
            throw new StaleTermException("promote", term, this.term);
        }
        this.term = term;
        role = NodeStatus.Role.LEADER;
        leader = config.nodeId();
    }

    @Override
    public synchronized void follow(String leaderNodeId, long term) {
        if (term < this.term || (term == this.term && !leaderNodeId.equals(leader))) {
            throw new StaleTermException("follow", term, this.term);
        }
        this.term = term;
        role = NodeStatus.Role.FOLLOWER;
        leader = leaderNodeId;
    }

    @Override
    public synchronized void fence(long term) {
        if (term < this.term) {
            throw new StaleTermException("fence", term, this.term);
        }
        this.term = term;
        role = NodeStatus.Role.FENCED;
        leader = null;
    }

    @Override
    public synchronized Histogram ackLatencySinceLastCall(String queue) {
        Histogram interval = ackLatency.get(queue);
        if (interval == null) {
            throw new IllegalArgumentException(queue);
        }
        ackLatency.put(queue, new Histogram(3));
        return interval;
    }

    @Override
    public synchronized void close() {
        closed = true;
    }
}
