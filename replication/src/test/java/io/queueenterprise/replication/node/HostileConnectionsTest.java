package io.queueenterprise.replication.node;

import io.queueenterprise.http.HardenedHttpServer;
import io.queueenterprise.http.HostileConnections;

import io.queueenterprise.replication.NodeStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Issue 19 §3: hostile TCP connections on loopback (idle, slow-loris, half-open, oversized header, oversized body:
 * {@value #PER_PORT} on each of the admin and metrics ports) must leave status, promote, fence, /healthz and /readyz
 * answering, and the node must close every one of them by itself (idle and read timeouts, header and body
 * limits). Each answer is bounded by the client at {@link #CLIENT_TIMEOUT} (the JDK HttpServer this replaced never
 * answered: its 1–2 workers sat on the first idle connections); the assertion is a generous {@link #ANSWER_BOUND},
 * never a tight timing (the contract's target is 100 ms; the measured latencies are printed).
 */
@org.junit.jupiter.api.Tag("slow")
@org.junit.jupiter.api.Tag("integration")
class HostileConnectionsTest {
    static final String TOKEN = AdminAndMetricsTest.TOKEN;
    /** Per port: idle, slow-loris, half-open, oversized header, oversized body, slow body. */
    static final int PER_PORT = HostileConnections.PER_ATTACK;
    /** The server must have closed every hostile connection by then (idle timeout 5 s, a trickle 10–15 s). */
    static final Duration ALL_CLOSED_BOUND = Duration.ofSeconds(45);
    static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(5);
    static final Duration ANSWER_BOUND = Duration.ofSeconds(2);

    @TempDir
    Path tmp;
    QueueNode node;
    final HostileConnections hostile = new HostileConnections();
    HttpClient http;

    @BeforeEach
    void start() throws IOException {
        Path tokenFile = tmp.resolve("token");
        Files.writeString(tokenFile, TOKEN + "\n");
        var config = AdminAndMetricsTest.configOnFreePorts(tmp, tokenFile, "replica-0");
        node = QueueNode.start(config, new FakeNodeControl(config), () -> Map.of(), Duration.ofHours(1));
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(CLIENT_TIMEOUT).build();
    }

    @AfterEach
    void stop() {
        hostile.close();
        node.close();
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void twoHundredHostileConnectionsLeaveAdminAndHealthAnswering() throws Exception {
        // once before the attack: class loading and the first JIT of each path are not what is measured
        assertEquals(200, admin("GET", "/v1/status", null).statusCode());
        assertEquals(200, metrics("/healthz").statusCode());
        hostile.attack(node.adminPort(), "POST /v1/promote HTTP/1.1", TOKEN);
        hostile.attack(node.metricsPort(), "GET /healthz HTTP/1.1", TOKEN);
        assertTrue(hostile.count() >= 200, "at least 200 hostile connections: " + hostile.count());
        hostile.startDripping();

        List<String> measured = new ArrayList<>();
        long term = 1;
        for (int round = 0; round < 3; round++) {
            Thread.sleep(500); // let the slow-loris drip in between rounds
            measured.add(timed("GET /v1/status", () -> assertEquals(200, admin("GET", "/v1/status", null).statusCode())));
            long promoteTerm = ++term;
            measured.add(timed("POST /v1/promote", () -> {
                HttpResponse<String> r = admin("POST", "/v1/promote", "{\"term\":" + promoteTerm + "}");
                assertEquals(200, r.statusCode(), r.body());
                assertTrue(r.body().contains("\"role\":\"" + NodeStatus.Role.LEADER + "\""), r.body());
            }));
            long fenceTerm = ++term;
            measured.add(timed("POST /v1/fence", () -> {
                HttpResponse<String> r = admin("POST", "/v1/fence", "{\"term\":" + fenceTerm + "}");
                assertEquals(200, r.statusCode(), r.body());
                assertTrue(r.body().contains("\"role\":\"" + NodeStatus.Role.FENCED + "\""), r.body());
            }));
            measured.add(timed("GET /healthz", () -> assertEquals(200, metrics("/healthz").statusCode())));
            measured.add(timed("GET /readyz", () -> assertEquals(503, metrics("/readyz").statusCode())));
        }
        System.out.println("HostileConnectionsTest: " + hostile.count() + " hostile connections held; answers: "
                + String.join(", ", measured));

        // the slow-loris keep dripping: only the node's read deadline, not its idle timeout, can end those
        long start = System.nanoTime();
        int[] trickling = new int[1];
        int open = hostile.openAfter(ALL_CLOSED_BOUND, trickling);
        assertEquals(0, open, open + " of " + hostile.count() + " hostile connections still open after "
                + ALL_CLOSED_BOUND.toSeconds() + " s (" + trickling[0] + " of them trickling bytes)");
        System.out.println("HostileConnectionsTest: the node closed all " + hostile.count() + " hostile connections within "
                + (System.nanoTime() - start) / 1_000_000 + " ms of the last answer");
    }

    /**
     * More idle connections than {@link HardenedHttpServer#MAX_CONNECTIONS}: the server holds no more than the limit
     * (the rest wait in the listen backlog; at the limit open ones idle out after 1 s) and /healthz still answers.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void pastTheConnectionLimitTheServerHoldsNoMoreAndStillAnswers() throws Exception {
        Path tokenFile = tmp.resolve("token");
        var config = AdminAndMetricsTest.configOnFreePorts(tmp, tokenFile, "replica-1");
        FakeNodeControl engine = new FakeNodeControl(config);
        try (MetricsServer metrics = MetricsServer.start(engine, config,
                new NodeMetrics(engine, config, () -> 0, Map.of(), Map::of))) {
            int count = HardenedHttpServer.MAX_CONNECTIONS + 100;
            for (int i = 0; i < count; i++) {
                hostile.connect(metrics.port());
            }
            int mostHeld = 0;
            long start = System.nanoTime();
            while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(3)) {
                mostHeld = Math.max(mostHeld, metrics.openConnections());
                Thread.sleep(20);
            }
            assertTrue(mostHeld <= HardenedHttpServer.MAX_CONNECTIONS, "the server held " + mostHeld + " of the " + count
                    + " connections; the limit is " + HardenedHttpServer.MAX_CONNECTIONS);
            long asked = System.nanoTime();
            HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metrics.port() + "/healthz"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode(), health.body());
            System.out.println("HostileConnectionsTest: " + count + " idle connections, at most " + mostHeld
                    + " held by the server; /healthz answered in " + (System.nanoTime() - asked) / 1_000_000 + " ms");
        }
    }

    private HttpResponse<String> admin(String method, String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.adminPort() + path))
                .timeout(CLIENT_TIMEOUT).header("Authorization", "Bearer " + TOKEN)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> metrics(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.metricsPort() + path))
                .timeout(CLIENT_TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String timed(String what, HostileConnections.Call call) throws Exception {
        return HostileConnections.timed(what, ANSWER_BOUND, call);
    }
}
