package io.queueenterprise.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.http.HostileConnections;

/**
 * The operator's port (metrics and the kubelet's probes) under hostile connections from inside the cluster: the
 * Prometheus client's JDK HttpServer it replaced gave its few workers to the first slow-loris connections, so the
 * probes timed out and the kubelet would restart a healthy operator. Answers are bounded by the client at
 * {@link #CLIENT_TIMEOUT}; the assertion is a generous {@link #ANSWER_BOUND}, never a tight timing.
 */
@org.junit.jupiter.api.Tag("integration")
@org.junit.jupiter.api.Tag("slow")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class OperatorEndpointsTest {
    static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(5);
    static final Duration ANSWER_BOUND = Duration.ofSeconds(2);
    static final Duration ALL_CLOSED_BOUND = Duration.ofSeconds(45);

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(CLIENT_TIMEOUT).build();

    @Test
    void twoHundredHostileConnectionsLeaveTheProbesAndTheScrapeAnsweringAndAreAllClosed() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        Counter.builder().name("queue_enterprise_operator_reconciliations_total").help("test").register(registry).inc();
        AtomicBoolean ready = new AtomicBoolean(false);
        try (OperatorEndpoints endpoints = OperatorEndpoints.start("127.0.0.1", 0, registry, ready::get);
             HostileConnections hostile = new HostileConnections()) {
            // once before the attack: class loading and the first JIT of each path are not what is measured
            assertEquals(200, get(endpoints, "/metrics").statusCode());
            hostile.attack(endpoints.port(), "GET /readyz HTTP/1.1", null);
            hostile.attack(endpoints.port(), "GET /-/healthy HTTP/1.1", null);
            assertTrue(hostile.count() >= 200, "at least 200 hostile connections: " + hostile.count());
            hostile.startDripping();

            List<String> measured = new ArrayList<>();
            for (int round = 0; round < 3; round++) {
                Thread.sleep(500);   // the slow-loris drip in between rounds
                measured.add(timed("GET /-/healthy", () -> assertEquals(200, get(endpoints, "/-/healthy").statusCode())));
                measured.add(timed("GET /readyz (not ready)", () -> assertEquals(503, get(endpoints, "/readyz").statusCode())));
                ready.set(true);
                measured.add(timed("GET /readyz (ready)", () -> assertEquals(200, get(endpoints, "/readyz").statusCode())));
                ready.set(false);
                measured.add(timed("GET /metrics", () -> {
                    HttpResponse<String> scrape = get(endpoints, "/metrics");
                    assertEquals(200, scrape.statusCode());
                    assertTrue(scrape.body().contains("queue_enterprise_operator_reconciliations_total 1.0"), scrape.body());
                }));
            }
            System.out.println("OperatorEndpointsTest: " + hostile.count() + " hostile connections held; answers: "
                + String.join(", ", measured));
            assertEquals(404, get(endpoints, "/nothing").statusCode());

            int[] trickling = new int[1];
            int open = hostile.openAfter(ALL_CLOSED_BOUND, trickling);
            assertEquals(0, open, open + " of " + hostile.count() + " hostile connections still open after "
                + ALL_CLOSED_BOUND.toSeconds() + " s (" + trickling[0] + " of them trickling bytes)");
        }
    }

    private HttpResponse<String> get(OperatorEndpoints endpoints, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + endpoints.port() + path))
            .timeout(CLIENT_TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String timed(String what, HostileConnections.Call call) throws Exception {
        return HostileConnections.timed(what, ANSWER_BOUND, call);
    }
}
