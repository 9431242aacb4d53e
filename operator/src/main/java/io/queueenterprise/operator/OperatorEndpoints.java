package io.queueenterprise.operator;

import java.io.IOException;
import java.util.function.BooleanSupplier;

import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;

import io.prometheus.metrics.exporter.common.PrometheusScrapeHandler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.http.HardenedHttpServer;
import io.queueenterprise.http.PrometheusJettyExchange;

/**
 * The operator's one HTTP port: {@code /metrics} (Prometheus), {@code /-/healthy} (liveness and startup: the process
 * answers) and {@code /readyz} (readiness: informers connected). On the control planes' hardened server
 * ({@link HardenedHttpServer}): idle, slow or half-open connections from anywhere in the cluster cannot hold the
 * threads the kubelet's probes need, so they cannot get a healthy operator restarted or taken out of its Service.
 */
public final class OperatorEndpoints implements AutoCloseable {
    public static final String METRICS_PATH = "/metrics";
    public static final String HEALTH_PATH = "/-/healthy";
    public static final String READINESS_PATH = "/readyz";

    private final PrometheusScrapeHandler scrape;
    private final BooleanSupplier ready;
    private Server server;

    private OperatorEndpoints(PrometheusRegistry registry, BooleanSupplier ready) {
        this.scrape = new PrometheusScrapeHandler(registry);
        this.ready = ready;
    }

    /** Serving on {@code host:port} (port 0: any free port; host 0.0.0.0: every address); a port in use is refused naming it. */
    public static OperatorEndpoints start(String host, int port, PrometheusRegistry registry, BooleanSupplier ready) throws IOException {
        OperatorEndpoints endpoints = new OperatorEndpoints(registry, ready);
        endpoints.server = HardenedHttpServer.start("metrics", "operator", host, port, endpoints.new Paths());
        return endpoints;
    }

    public int port() {
        return HardenedHttpServer.port(server);
    }

    @Override
    public void close() {
        HardenedHttpServer.stop(server);
    }

    private final class Paths extends Handler.Abstract {
        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception {
            String path = request.getHttpURI().getDecodedPath();
            switch (path) {
                case METRICS_PATH -> {
                    try (PrometheusJettyExchange exchange = new PrometheusJettyExchange(request, response, callback)) {
                        scrape.handleRequest(exchange);
                    }
                }
                case HEALTH_PATH -> HardenedHttpServer.sendText(response, callback, 200, "healthy");
                case READINESS_PATH -> {
                    boolean isReady = ready.getAsBoolean();
                    HardenedHttpServer.sendText(response, callback, isReady ? 200 : 503, isReady ? "ready" : "not ready");
                }
                default -> HardenedHttpServer.sendText(response, callback, 404,
                    "not found: " + path + "; this port serves " + METRICS_PATH + ", " + HEALTH_PATH + ", " + READINESS_PATH);
            }
            return true;
        }
    }
}
