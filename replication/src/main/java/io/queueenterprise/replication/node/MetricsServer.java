package io.queueenterprise.replication.node;

import io.prometheus.metrics.exporter.common.PrometheusScrapeHandler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.http.HardenedHttpServer;
import io.queueenterprise.http.PrometheusJettyExchange;
import io.queueenterprise.replication.NodeControl;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.config.NodeConfig;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;

import java.io.IOException;
import java.util.stream.Collectors;

/**
 * The metrics port, apart from the admin endpoint and without credential (nothing here reveals data):
 * {@code /metrics} (Prometheus text, {@link NodeMetrics} through the Prometheus client's handler), {@code /healthz}
 * (the node answers a status call and its embedded Aeron client and driver run: 200, else 503 with the reason, so
 * a liveness probe restarts a node whose transport died and could not be restarted in place) and {@code /readyz}
 * (200 when leading, or following with every queue LIVE; 503 naming what is not). Its own server and bounded pool
 * ({@link HardenedHttpServer}), apart from the admin endpoint: scrapes and hostile connections here cannot starve a
 * promote or a fence, and hostile connections cannot hold the threads the kubelet's probes need.
 */
public final class MetricsServer implements AutoCloseable {
    private final NodeControl node;
    private final PrometheusScrapeHandler scrape;
    private Server server;

    private MetricsServer(NodeControl node, PrometheusScrapeHandler scrape) {
        this.node = node;
        this.scrape = scrape;
    }

    public static MetricsServer start(NodeControl node, NodeConfig config, NodeMetrics metrics) throws IOException {
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(metrics);
        MetricsServer metricsServer = new MetricsServer(node, new PrometheusScrapeHandler(registry));
        metricsServer.server = HardenedHttpServer.start("metrics", config.nodeId(), config.metrics().bindAddress(),
                config.metrics().port(), metricsServer.new MetricsHandler());
        return metricsServer;
    }

    public int port() {
        return HardenedHttpServer.port(server);
    }

    /** Connections this port holds open now (HardenedHttpServer.MAX_CONNECTIONS at most). */
    int openConnections() {
        return HardenedHttpServer.openConnections(server);
    }

    /** The paths as the JDK server's contexts matched them: the context itself or anything under it. */
    private static boolean under(String path, String context) {
        return path.startsWith(context);
    }

    private final class MetricsHandler extends Handler.Abstract {
        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception {
            String path = request.getHttpURI().getDecodedPath();
            if (under(path, "/metrics")) {
                try (PrometheusJettyExchange exchange = new PrometheusJettyExchange(request, response, callback)) {
                    scrape.handleRequest(exchange);
                }
            } else if (under(path, "/healthz")) {
                health(response, callback);
            } else if (under(path, "/readyz")) {
                ready(response, callback);
            } else {
                send(response, callback, 404, "not found: " + path + "; this port serves /metrics, /healthz, /readyz");
            }
            return true;
        }
    }

    private void health(Response response, Callback callback) {
        try {
            NodeStatus status = node.status();
            String transport = node.transportProblem();
            if (transport != null) {
                send(response, callback, 503, "not healthy: " + transport);
                return;
            }
            send(response, callback, 200, "ok: " + status.role() + " at term " + status.term());
        } catch (RuntimeException e) {
            send(response, callback, 503, "not healthy: " + e);
        }
    }

    private void ready(Response response, Callback callback) {
        NodeStatus status;
        try {
            status = node.status();
        } catch (RuntimeException e) {
            send(response, callback, 503, "not ready: " + e);
            return;
        }
        String transport = node.transportProblem();
        if (transport != null) {
            send(response, callback, 503, "not ready: " + transport);
            return;
        }
        String notLive = status.queues().stream().filter(q -> q.state() != QueueStatus.State.LIVE)
                .map(q -> q.name() + " " + q.state()).collect(Collectors.joining(", "));
        if (status.role() == NodeStatus.Role.LEADER || (status.role() == NodeStatus.Role.FOLLOWER && notLive.isEmpty())) {
            send(response, callback, 200, "ready: " + status.role() + " at term " + status.term());
        } else {
            send(response, callback, 503, "not ready: " + status.role() + (notLive.isEmpty() ? "" : "; " + notLive));
        }
    }

    private static void send(Response response, Callback callback, int status, String text) {
        HardenedHttpServer.sendText(response, callback, status, text);
    }

    @Override
    public void close() {
        HardenedHttpServer.stop(server);
    }
}
