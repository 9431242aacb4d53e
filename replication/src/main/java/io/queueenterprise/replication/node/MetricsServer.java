package io.queueenterprise.replication.node;

import io.prometheus.metrics.exporter.common.PrometheusHttpExchange;
import io.prometheus.metrics.exporter.common.PrometheusHttpRequest;
import io.prometheus.metrics.exporter.common.PrometheusHttpResponse;
import io.prometheus.metrics.exporter.common.PrometheusScrapeHandler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.replication.NodeControl;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.config.NodeConfig;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Enumeration;
import java.util.stream.Collectors;

/**
 * The metrics port, apart from the admin endpoint and without credential (nothing here reveals data):
 * {@code /metrics} (Prometheus text, {@link NodeMetrics} through the Prometheus client's handler), {@code /healthz}
 * (the node answers a status call and its embedded Aeron client and driver run: 200, else 503 with the reason, so
 * a liveness probe restarts a node whose transport died and could not be restarted in place) and {@code /readyz}
 * (200 when leading, or following with every queue LIVE; 503 naming what is not). Its own server and bounded pool
 * ({@link HttpEndpoints}), apart from the admin endpoint: scrapes and hostile connections here cannot starve a
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
        metricsServer.server = HttpEndpoints.start("metrics", config.nodeId(), config.metrics().bindAddress(),
                config.metrics().port(), metricsServer.new MetricsHandler());
        return metricsServer;
    }

    public int port() {
        return HttpEndpoints.port(server);
    }

    /** Connections this port holds open now (HttpEndpoints.MAX_CONNECTIONS at most). */
    int openConnections() {
        return HttpEndpoints.openConnections(server);
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
                try (JettyExchange exchange = new JettyExchange(request, response, callback)) {
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
        byte[] body = (text + "\n").getBytes(StandardCharsets.UTF_8);
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
    }

    @Override
    public void close() {
        HttpEndpoints.stop(server);
    }

    /** A Jetty request/response as the Prometheus client's scrape handler takes it (its adapter point for servers). */
    private static final class JettyExchange implements PrometheusHttpExchange, PrometheusHttpRequest, PrometheusHttpResponse {
        private final Request request;
        private final Response response;
        private final Callback callback;
        private OutputStream body;
        /** Failed or completed: the scrape handler closes the exchange itself, and so does the try block around it. */
        private boolean done;

        JettyExchange(Request request, Response response, Callback callback) {
            this.request = request;
            this.response = response;
            this.callback = callback;
        }

        @Override
        public PrometheusHttpRequest getRequest() {
            return this;
        }

        @Override
        public PrometheusHttpResponse getResponse() {
            return this;
        }

        @Override
        public String getQueryString() {
            return request.getHttpURI().getQuery();
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            return Collections.enumeration(request.getHeaders().getValuesList(name));
        }

        @Override
        public String getMethod() {
            return request.getMethod();
        }

        @Override
        public String getRequestPath() {
            return request.getHttpURI().getDecodedPath();
        }

        @Override
        public void setHeader(String name, String value) {
            response.getHeaders().put(name, value);
        }

        @Override
        public OutputStream sendHeadersAndGetBody(int statusCode, int contentLength) {
            response.setStatus(statusCode);
            if (contentLength > 0) {
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, contentLength);
            }
            body = Content.Sink.asOutputStream(response);
            return body;
        }

        @Override
        public void handleException(IOException e) throws IOException {
            done = true;
            callback.failed(e);
            throw e;
        }

        @Override
        public void handleException(RuntimeException e) {
            done = true;
            if (body == null) {
                send(response, callback, 500, "scrape failed: " + e);
            } else {
                callback.failed(e);
            }
        }

        @Override
        public void close() {
            if (done) {
                return;
            }
            done = true;
            try {
                if (body == null) {
                    body = Content.Sink.asOutputStream(response);
                }
                body.close(); // the last write: completes the response
                callback.succeeded();
            } catch (IOException e) {
                callback.failed(e);
            }
        }
    }
}
