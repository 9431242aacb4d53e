package io.queueenterprise.replication.node;

import io.queueenterprise.replication.NodeControl;
import io.queueenterprise.replication.config.NodeConfig;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A running queue node around its replication engine: the admin endpoint, the metrics port and retention. The
 * engine ({@link NodeControl}) owns the data path and its one duty-cycle thread; everything here runs on threads of
 * its own, idle but for rare requests, scrapes and the retention pass. {@link #close()} stops the control surfaces
 * first (no role change can race the shutdown), then retention, then closes the engine gracefully (what was
 * acknowledged stays acknowledged).
 */
public final class QueueNode implements AutoCloseable {
    public static final Duration RETENTION_INTERVAL = Duration.ofMinutes(1);

    private final NodeControl engine;
    private final AdminServer admin;
    private final MetricsServer metrics;
    private final RetentionTask retention;

    private QueueNode(NodeControl engine, AdminServer admin, MetricsServer metrics, RetentionTask retention) {
        this.engine = engine;
        this.admin = admin;
        this.metrics = metrics;
        this.retention = retention;
    }

    /**
     * A started engine, its dropped-frame counters by reason (empty when it gives none), and the same by reason and
     * frame type and by reason and peer identity.
     */
    public record Engine(NodeControl control, Supplier<Map<String, Long>> framesDroppedByReason,
                         Supplier<java.util.List<DroppedFrames>> droppedFrames) {
        public Engine(NodeControl control, Supplier<Map<String, Long>> framesDroppedByReason) {
            this(control, framesDroppedByReason, java.util.List::of);
        }
    }

    /**
     * Checks what the node needs besides the engine (the admin token), then starts the engine with
     * {@code engineFactory} and serves it: a node that could not be driven never starts replicating.
     */
    public static QueueNode start(NodeConfig config, Function<NodeConfig, Engine> engineFactory,
                                  Duration retentionInterval) throws IOException {
        new AdminToken(config.admin().credentialFile());
        Engine engine = engineFactory.apply(config);
        return start(config, engine.control(), engine.framesDroppedByReason(), engine.droppedFrames(), retentionInterval);
    }

    /**
     * Serves {@code engine} (already started from {@code config}) on the admin and metrics ports and starts
     * retention every {@code retentionInterval}. On failure everything started here is stopped and the engine closed.
     */
    public static QueueNode start(NodeConfig config, NodeControl engine, Duration retentionInterval) throws IOException {
        return start(config, engine, Map::of, retentionInterval);
    }

    /**
     * As {@link #start(NodeConfig, NodeControl, Duration)}, with the engine's dropped-frame counters by reason for
     * the metrics ({@code qe_node_frames_dropped_total}).
     */
    public static QueueNode start(NodeConfig config, NodeControl engine, Supplier<Map<String, Long>> framesDroppedByReason,
                                  Duration retentionInterval) throws IOException {
        return start(config, engine, framesDroppedByReason, java.util.List::of, retentionInterval);
    }

    /** As above, with the dropped-frame counters by reason and type and by reason and peer ({@link DroppedFrames}). */
    public static QueueNode start(NodeConfig config, NodeControl engine, Supplier<Map<String, Long>> framesDroppedByReason,
                                  Supplier<java.util.List<DroppedFrames>> droppedFrames, Duration retentionInterval)
            throws IOException {
        AdminServer admin = null;
        MetricsServer metrics = null;
        RetentionTask retention = null;
        try {
            retention = new RetentionTask(config, engine::status, Clock.systemUTC());
            admin = AdminServer.start(engine, config);
            metrics = MetricsServer.start(engine, config,
                    new NodeMetrics(engine, config, admin::unauthorizedRequests, retention.counters(), framesDroppedByReason,
                            droppedFrames));
            retention.start(retentionInterval);
            return new QueueNode(engine, admin, metrics, retention);
        } catch (IOException | RuntimeException e) {
            closeAll(admin, metrics, retention, engine);
            throw e;
        }
    }

    public NodeControl engine() {
        return engine;
    }

    public int adminPort() {
        return admin.port();
    }

    public int metricsPort() {
        return metrics.port();
    }

    @Override
    public void close() {
        closeAll(admin, metrics, retention, engine);
    }

    private static void closeAll(AutoCloseable... parts) {
        RuntimeException failure = null;
        for (AutoCloseable part : parts) {
            if (part == null) {
                continue;
            }
            try {
                part.close();
            } catch (Exception e) { // close the rest anyway; report the first failure
                if (failure == null) {
                    failure = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
