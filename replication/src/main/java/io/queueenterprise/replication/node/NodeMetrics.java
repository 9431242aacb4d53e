package io.queueenterprise.replication.node;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.queueenterprise.replication.NodeControl;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.config.NodeConfig;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The node's Prometheus metrics, collected by callback at scrape time (one {@link NodeControl#status()} per scrape,
 * nothing on the data path). Names and meanings: docs/node-contract.md, "Metrics". Indexes are Chronicle indexes
 * (cycle and sequence in one long) as doubles: exact below 2^53, which every roll cycle up to FAST_HOURLY stays
 * under for centuries; lags are differences and small.
 */
public final class NodeMetrics implements MultiCollector {
    /** Bucket upper bounds of the ack latency histogram, seconds: 1 µs to 5 s, 1-2-5 steps. */
    static final double[] ACK_LATENCY_BOUNDS = {
            1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3,
            1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1, 2, 5, Double.POSITIVE_INFINITY};

    private final NodeControl node;
    private final NodeConfig config;
    private final LongSupplier unauthorizedAdminRequests;
    private final Map<String, RetentionTask.Counters> retention;
    private final Supplier<Map<String, Long>> framesDroppedByReason;
    private final Supplier<java.util.List<DroppedFrames>> droppedFrames;
    /** Prometheus histograms are cumulative since start; the node hands out intervals: they add up here. */
    private final Map<String, Histogram> ackLatencyNanos = new HashMap<>();

    /**
     * @param framesDroppedByReason the engine's node-wide dropped-frame counters by reason (malformed,
     *                              unauthenticated, stale term, ...), read at scrape time; empty when it gives none
     */
    public NodeMetrics(NodeControl node, NodeConfig config, LongSupplier unauthorizedAdminRequests,
                       Map<String, RetentionTask.Counters> retention, Supplier<Map<String, Long>> framesDroppedByReason) {
        this(node, config, unauthorizedAdminRequests, retention, framesDroppedByReason, java.util.List::of);
    }

    /** @param droppedFrames the same counters by reason and frame type, and by reason and peer identity (non-zero cells) */
    public NodeMetrics(NodeControl node, NodeConfig config, LongSupplier unauthorizedAdminRequests,
                Map<String, RetentionTask.Counters> retention, Supplier<Map<String, Long>> framesDroppedByReason,
                Supplier<java.util.List<DroppedFrames>> droppedFrames) {
        this.droppedFrames = droppedFrames;
        this.node = node;
        this.config = config;
        this.unauthorizedAdminRequests = unauthorizedAdminRequests;
        this.retention = retention;
        this.framesDroppedByReason = framesDroppedByReason;
        for (NodeConfig.QueueSpec queue : config.queues()) {
            ackLatencyNanos.put(queue.name(), new Histogram(3));
        }
    }

    @Override
    public synchronized MetricSnapshots collect() { // synchronized: two scrapes must not split one interval
        NodeStatus status = node.status();
        List<MetricSnapshot> out = new ArrayList<>();
        Labels nodeLabel = Labels.of("node", status.nodeId());
        out.add(gauge("qe_node_term", "the highest leadership term this node has persisted").dataPoint(
                GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(nodeLabel).value(status.term()).build()).build());
        GaugeSnapshot.Builder role = gauge("qe_node_role", "1 for the node's current role, 0 for the others");
        for (NodeStatus.Role r : NodeStatus.Role.values()) {
            role.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(nodeLabel.add("role", r.name()))
                    .value(r == status.role() ? 1 : 0).build());
        }
        out.add(role.build());
        out.add(counter("qe_admin_unauthorized_requests", "admin requests refused with 401").dataPoint(
                CounterSnapshot.CounterDataPointSnapshot.builder().labels(nodeLabel)
                        .value(unauthorizedAdminRequests.getAsLong()).build()).build());

        out.add(counter("qe_node_transport_restarts", "times the node restarted its embedded Aeron client and driver after they died").dataPoint(
                counterPoint(nodeLabel, node.transportRestarts())).build());
        out.add(counter("qe_node_identity_sessions_closed", "peer sessions closed because the peer's identity pin changed to a key the session had not proved").dataPoint(
                counterPoint(nodeLabel, node.identitySessionsClosed())).build());
        out.add(counter("qe_node_peer_identities_refused", "contents of the peer-identities file refused whole (malformed); the pins in force were kept").dataPoint(
                counterPoint(nodeLabel, node.peerIdentitiesRefusals())).build());
        out.add(gauge("qe_node_transport_up", "1 while the embedded Aeron client and driver run; 0 when they died and could not be restarted")
                .dataPoint(gaugePoint(nodeLabel, node.transportProblem() == null ? 1 : 0)).build());
        out.add(gauge("qe_node_lease_acknowledging", "1 while this node leads, holds its leader lease and its term is confirmed: it may acknowledge appends")
                .dataPoint(gaugePoint(nodeLabel, status.lease().acknowledging() ? 1 : 0)).build());

        Map<String, String> unresolved = node.unresolvedPeers();
        GaugeSnapshot.Builder peerAddress = gauge("qe_peer_address_resolved",
                "1 when this node has a channel to the peer; 0 while its host name does not resolve (looked up again with backoff)");
        for (NodeConfig.Peer peer : config.peers()) {
            if (!peer.id().equals(status.nodeId())) {
                peerAddress.dataPoint(gaugePoint(nodeLabel.add("peer", peer.id()), unresolved.containsKey(peer.id()) ? 0 : 1));
            }
        }
        out.add(peerAddress.build());

        CounterSnapshot.Builder droppedByReason = counter("qe_node_frames_dropped", "frames this node dropped since start, by reason");
        for (Map.Entry<String, Long> e : new TreeMap<>(framesDroppedByReason.get()).entrySet()) {
            droppedByReason.dataPoint(counterPoint(nodeLabel.add("reason", e.getKey()), e.getValue()));
        }
        out.add(droppedByReason.build());
        CounterSnapshot.Builder droppedByType = counter("qe_node_frames_dropped_by_type",
                "frames this node dropped since start, by reason and frame type (cells that are not zero)");
        CounterSnapshot.Builder droppedByPeer = counter("qe_node_frames_dropped_by_peer",
                "frames this node dropped since start, by reason and the replica identity they named (SENDER_MISMATCH: that sent them)");
        CounterSnapshot.Builder droppedByClient = counter("qe_node_client_frames_dropped_by_client",
                "remote clients' handshake frames this node dropped since start, by reason and the client they named ((unknown): none authorised)");
        for (DroppedFrames d : droppedFrames.get()) {
            if (d.client() != null) {
                droppedByClient.dataPoint(counterPoint(nodeLabel.add("reason", d.reason()).add("client", d.client()), d.count()));
            } else if (d.frameType() != null) {
                droppedByType.dataPoint(counterPoint(nodeLabel.add("reason", d.reason()).add("type", d.frameType()), d.count()));
            } else {
                droppedByPeer.dataPoint(counterPoint(nodeLabel.add("reason", d.reason()).add("peer", d.peer()), d.count()));
            }
        }
        out.add(droppedByType.build());
        out.add(droppedByPeer.build());
        out.add(droppedByClient.build());

        GaugeSnapshot.Builder last = gauge("qe_queue_last_index", "the last excerpt this replica holds (leader: appended; follower: replicated); -1 empty");
        GaugeSnapshot.Builder durable = gauge("qe_queue_durable_index", "the last index held with everything before it (what this node acknowledges)");
        GaugeSnapshot.Builder quorum = gauge("qe_queue_quorum_index", "the highest index a majority holds, as far as this node knows; -1 unknown");
        GaugeSnapshot.Builder first = gauge("qe_queue_first_index", "the first index still held (retention deletes below it); -1 empty");
        GaugeSnapshot.Builder state = gauge("qe_queue_state", "1 for the queue's replication state (LIVE, CATCHING_UP, ...), 0 for the others");
        CounterSnapshot.Builder bytes = counter("qe_queue_replicated_bytes", "excerpt bytes sent (leader) or written (follower) since start");
        CounterSnapshot.Builder dropped = counter("qe_queue_frames_dropped", "frames dropped since start: malformed, unauthenticated, stale term, unknown session");
        CounterSnapshot.Builder resyncs = counter("qe_queue_resyncs", "follower: times its copy resynchronised with the leader since start (writer behind, gap, broken pieces, disk room again)");
        CounterSnapshot.Builder writerStalls = counter("qe_queue_writer_stalls", "times since start the queue's writer was blocked in the store for 1 s or more");
        GaugeSnapshot.Builder writerBlocked = gauge("qe_queue_writer_blocked_seconds", "how long the queue's writer has been in its current operation; 0 when idle");
        GaugeSnapshot.Builder quarantines = gauge("qe_queue_quarantines", "quarantine folders of the queue on disk (excerpts moved aside, divergent or damaged)");
        GaugeSnapshot.Builder connected = gauge("qe_peer_connected", "leader only: 1 when the follower's session is established and authenticated");
        GaugeSnapshot.Builder peerDurable = gauge("qe_peer_durable_index", "leader only: the last index the follower acknowledged as held");
        GaugeSnapshot.Builder lagExcerpts = gauge("qe_peer_lag_excerpts", "leader only: leader's last index minus the follower's durable index");
        GaugeSnapshot.Builder lagSeconds = gauge("qe_peer_lag_seconds", "leader only: age of the oldest excerpt the follower has not acknowledged; 0 when caught up");
        GaugeSnapshot.Builder peerState = gauge("qe_peer_state", "leader only: 1 for the follower's state as it last reported it, 0 for the others");
        HistogramSnapshot.Builder ackLatency = HistogramSnapshot.builder().name("qe_ack_latency_seconds")
                .help("quorum mode, leader: append to quorum acknowledgement");
        CounterSnapshot.Builder retentionFiles = counter("qe_retention_deleted_files", "cycle files deleted by retention since start");
        CounterSnapshot.Builder retentionBytes = counter("qe_retention_deleted_bytes", "bytes of cycle files deleted by retention since start");
        CounterSnapshot.Builder retentionForced = counter("qe_retention_forced_deletions", "cycle files maxBytes forced deleting although a connected follower still needed them");
        GaugeSnapshot.Builder retentionHeld = gauge("qe_retention_held_back_cycles", "cycles past maxAge kept at the last retention run for a connected follower");

        for (QueueStatus q : status.queues()) {
            Labels queue = nodeLabel.add("queue", q.name());
            last.dataPoint(gaugePoint(queue, q.lastIndex()));
            durable.dataPoint(gaugePoint(queue, q.durableIndex()));
            quorum.dataPoint(gaugePoint(queue, q.quorumIndex()));
            first.dataPoint(gaugePoint(queue, q.firstIndex()));
            for (QueueStatus.State s : QueueStatus.State.values()) {
                state.dataPoint(gaugePoint(queue.add("state", s.name()), s == q.state() ? 1 : 0));
            }
            bytes.dataPoint(counterPoint(queue, q.bytesReplicated()));
            dropped.dataPoint(counterPoint(queue, q.framesDropped()));
            resyncs.dataPoint(counterPoint(queue, q.resyncs().count()));
            writerStalls.dataPoint(counterPoint(queue, q.writer().stalls()));
            writerBlocked.dataPoint(gaugePoint(queue, q.writer().blockedMillis() / 1e3));
            quarantines.dataPoint(gaugePoint(queue, q.quarantines().count()));
            for (QueueStatus.PeerProgress p : q.peers()) {
                Labels peer = queue.add("peer", p.nodeId());
                connected.dataPoint(gaugePoint(peer, p.connected() ? 1 : 0));
                peerDurable.dataPoint(gaugePoint(peer, p.durableIndex()));
                lagExcerpts.dataPoint(gaugePoint(peer, p.lagExcerpts()));
                lagSeconds.dataPoint(gaugePoint(peer, p.lagNanos() / 1e9));
                for (QueueStatus.State s : QueueStatus.State.values()) {
                    peerState.dataPoint(gaugePoint(peer.add("state", s.name()), s == p.state() ? 1 : 0));
                }
            }
            Histogram cumulative = ackLatencyNanos.get(q.name());
            if (cumulative != null) {
                cumulative.add(node.ackLatencySinceLastCall(q.name()));
                ackLatency.dataPoint(histogramPoint(queue, cumulative));
            }
            RetentionTask.Counters r = retention.get(q.name());
            if (r != null && config.queues().stream().anyMatch(spec -> spec.name().equals(q.name())
                    && (spec.retention().maxAge().isPresent() || spec.retention().maxBytes().isPresent()))) {
                retentionFiles.dataPoint(counterPoint(queue, r.deletedFiles()));
                retentionBytes.dataPoint(counterPoint(queue, r.deletedBytes()));
                retentionForced.dataPoint(counterPoint(queue, r.forcedDeletions()));
                retentionHeld.dataPoint(gaugePoint(queue, r.heldBackCycles()));
            }
        }
        out.add(last.build());
        out.add(durable.build());
        out.add(quorum.build());
        out.add(first.build());
        out.add(state.build());
        out.add(bytes.build());
        out.add(dropped.build());
        out.add(resyncs.build());
        out.add(writerStalls.build());
        out.add(writerBlocked.build());
        out.add(quarantines.build());
        out.add(connected.build());
        out.add(peerDurable.build());
        out.add(lagExcerpts.build());
        out.add(lagSeconds.build());
        out.add(peerState.build());
        out.add(ackLatency.build());
        out.add(retentionFiles.build());
        out.add(retentionBytes.build());
        out.add(retentionForced.build());
        out.add(retentionHeld.build());
        return new MetricSnapshots(out);
    }

    /**
     * An HdrHistogram of nanoseconds as a Prometheus classic histogram of seconds: each bucket holds the values
     * HdrHistogram counts up to its bound (within HdrHistogram's precision, 3 significant digits here); the count
     * is exact; the sum adds each recorded value's median equivalent.
     */
    static HistogramSnapshot.HistogramDataPointSnapshot histogramPoint(Labels labels, Histogram nanos) {
        long[] counts = new long[ACK_LATENCY_BOUNDS.length];
        long below = 0;
        for (int i = 0; i < ACK_LATENCY_BOUNDS.length - 1; i++) {
            long bound = Math.round(ACK_LATENCY_BOUNDS[i] * 1e9);
            long upTo = nanos.getTotalCount() == 0 ? 0
                    : bound >= nanos.getMaxValue() ? nanos.getTotalCount() : nanos.getCountBetweenValues(0, bound);
            counts[i] = upTo - below; // the model takes each bucket's own count, not the running total
            below = upTo;
        }
        counts[counts.length - 1] = nanos.getTotalCount() - below;
        double sumNanos = 0;
        for (HistogramIterationValue v : nanos.recordedValues()) {
            sumNanos += (double) nanos.medianEquivalentValue(v.getValueIteratedTo()) * v.getCountAtValueIteratedTo();
        }
        return HistogramSnapshot.HistogramDataPointSnapshot.builder().labels(labels)
                .classicHistogramBuckets(ClassicHistogramBuckets.of(ACK_LATENCY_BOUNDS, counts))
                .sum(sumNanos / 1e9).build();
    }

    private static GaugeSnapshot.Builder gauge(String name, String help) {
        return GaugeSnapshot.builder().name(name).help(help);
    }

    private static CounterSnapshot.Builder counter(String name, String help) {
        return CounterSnapshot.builder().name(name).help(help);
    }

    private static GaugeSnapshot.GaugeDataPointSnapshot gaugePoint(Labels labels, double value) {
        return GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(labels).value(value).build();
    }

    private static CounterSnapshot.CounterDataPointSnapshot counterPoint(Labels labels, long value) {
        return CounterSnapshot.CounterDataPointSnapshot.builder().labels(labels).value(value).build();
    }
}
