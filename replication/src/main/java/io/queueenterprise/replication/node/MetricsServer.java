package io.queueenterprise.replication.node;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.metrics.exporter.httpserver.MetricsHandler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.replication.NodeControl;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.config.NodeConfig;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;

/**
 * The metrics port, apart from the admin endpoint and without credential (nothing here reveals data):
 * {@code /metrics} (Prometheus text, {@link NodeMetrics} through the Prometheus client's handler), {@code /healthz}
 * (the node answers a status call and its embedded Aeron client and driver run: 200, else 503 with the reason, so
 * a liveness probe restarts a node whose transport died and could not be restarted in place) and {@code /readyz}
 * (200 when leading, or following with every queue LIVE; 503 naming what is not).
 */
public final class MetricsServer implements AutoCloseable {
    private final HttpServer server;
    private final ExecutorService executor;
    private final NodeControl node;

    private MetricsServer(HttpServer server, ExecutorService executor, NodeControl node) {
        this.server = server;
        this.executor = executor;
        this.node = node;
    }

    public static MetricsServer start(NodeControl node, NodeConfig config, NodeMetrics metrics) throws IOException {
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(metrics);
        HttpServer server = HttpEndpoints.bind("metrics", config.metrics().bindAddress(), config.metrics().port());
        ExecutorService executor = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "qe-metrics-" + config.nodeId());
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        MetricsServer metricsServer = new MetricsServer(server, executor, node);
        server.createContext("/metrics", new MetricsHandler(registry));
        server.createContext("/healthz", metricsServer::health);
        server.createContext("/readyz", metricsServer::ready);
        server.start();
        return metricsServer;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private void health(HttpExchange exchange) throws IOException {
        try (exchange) {
            try {
                NodeStatus status = node.status();
                String transport = node.transportProblem();
                if (transport != null) {
                    send(exchange, 503, "not healthy: " + transport);
                    return;
                }
                send(exchange, 200, "ok: " + status.role() + " at term " + status.term());
            } catch (RuntimeException e) {
                send(exchange, 503, "not healthy: " + e);
            }
        }
    }

    private void ready(HttpExchange exchange) throws IOException {
        try (exchange) {
            NodeStatus status;
            try {
                status = node.status();
            } catch (RuntimeException e) {
                send(exchange, 503, "not ready: " + e);
                return;
            }
            String transport = node.transportProblem();
            if (transport != null) {
                send(exchange, 503, "not ready: " + transport);
                return;
            }
            String notLive = status.queues().stream().filter(q -> q.state() != QueueStatus.State.LIVE)
                    .map(q -> q.name() + " " + q.state()).collect(Collectors.joining(", "));
            if (status.role() == NodeStatus.Role.LEADER || (status.role() == NodeStatus.Role.FOLLOWER && notLive.isEmpty())) {
                send(exchange, 200, "ready: " + status.role() + " at term " + status.term());
            } else {
                send(exchange, 503, "not ready: " + status.role() + (notLive.isEmpty() ? "" : "; " + notLive));
            }
        }
    }

    private static void send(HttpExchange exchange, int status, String text) throws IOException {
        byte[] body = (text + "\n").getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
