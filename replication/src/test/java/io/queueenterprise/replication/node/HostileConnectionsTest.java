package io.queueenterprise.replication.node;

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
class HostileConnectionsTest {
    static final String TOKEN = AdminAndMetricsTest.TOKEN;
    /** Per port: idle, slow-loris, half-open, oversized header, oversized body. */
    static final int IDLE = 50;
    static final int SLOW_LORIS = 20;
    static final int HALF_OPEN = 20;
    static final int OVERSIZED_HEADER = 10;
    static final int OVERSIZED_BODY = 10;
    static final int SLOW_BODY = 10;
    static final int PER_PORT = IDLE + SLOW_LORIS + HALF_OPEN + OVERSIZED_HEADER + OVERSIZED_BODY + SLOW_BODY;
    /** The server must have closed every hostile connection by then (idle timeout 5 s, a trickle 10–15 s). */
    static final Duration ALL_CLOSED_BOUND = Duration.ofSeconds(45);
    static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(5);
    static final Duration ANSWER_BOUND = Duration.ofSeconds(2);

    @TempDir
    Path tmp;
    QueueNode node;
    final List<Socket> hostile = new ArrayList<>();
    /** Trickling connections and the byte each gets every 500 ms: a header name growing, or JSON whitespace. */
    final Map<Socket, Character> slowLoris = new java.util.concurrent.ConcurrentHashMap<>();
    ScheduledExecutorService drip;
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
        if (drip != null) {
            drip.shutdownNow();
        }
        for (Socket s : hostile) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing is best effort; the node closes its side too
            }
        }
        node.close();
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void twoHundredHostileConnectionsLeaveAdminAndHealthAnswering() throws Exception {
        attack(node.adminPort(), "POST /v1/promote HTTP/1.1");
        attack(node.metricsPort(), "GET /healthz HTTP/1.1");
        assertTrue(hostile.size() >= 200, "at least 200 hostile connections: " + hostile.size());
        drip = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "slow-loris-drip");
            t.setDaemon(true);
            return t;
        });
        drip.scheduleAtFixedRate(this::dripOneByte, 0, 500, TimeUnit.MILLISECONDS);

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
        System.out.println("HostileConnectionsTest: " + hostile.size() + " hostile connections held; answers: "
                + String.join(", ", measured));

        // the slow-loris keep dripping: only the node's read deadline, not its idle timeout, can end those
        long start = System.nanoTime();
        List<Socket> open = new ArrayList<>(hostile);
        while (!open.isEmpty() && System.nanoTime() - start < ALL_CLOSED_BOUND.toNanos()) {
            open.removeIf(HostileConnectionsTest::closedByServer);
            Thread.sleep(250);
        }
        assertTrue(open.isEmpty(), open.size() + " of " + hostile.size() + " hostile connections still open after "
                + ALL_CLOSED_BOUND.toSeconds() + " s (" + open.stream().filter(slowLoris::containsKey).count()
                + " of them trickling bytes)");
        System.out.println("HostileConnectionsTest: the node closed all " + hostile.size() + " hostile connections within "
                + (System.nanoTime() - start) / 1_000_000 + " ms of the last answer");
    }

    /**
     * More idle connections than {@link HttpEndpoints#MAX_CONNECTIONS}: the server holds no more than the limit
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
            int count = HttpEndpoints.MAX_CONNECTIONS + 100;
            for (int i = 0; i < count; i++) {
                connect(metrics.port());
            }
            int mostHeld = 0;
            long start = System.nanoTime();
            while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(3)) {
                mostHeld = Math.max(mostHeld, metrics.openConnections());
                Thread.sleep(20);
            }
            assertTrue(mostHeld <= HttpEndpoints.MAX_CONNECTIONS, "the server held " + mostHeld + " of the " + count
                    + " connections; the limit is " + HttpEndpoints.MAX_CONNECTIONS);
            long asked = System.nanoTime();
            HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metrics.port() + "/healthz"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode(), health.body());
            System.out.println("HostileConnectionsTest: " + count + " idle connections, at most " + mostHeld
                    + " held by the server; /healthz answered in " + (System.nanoTime() - asked) / 1_000_000 + " ms");
        }
    }

    /** True once the node has closed {@code s} (end of stream or reset); any answer it sent first is skipped. */
    private static boolean closedByServer(Socket s) {
        byte[] buffer = new byte[8192];
        try {
            InputStream in = s.getInputStream();
            while (true) {
                if (in.read(buffer) < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    /** Opens {@link #PER_PORT} hostile connections to {@code port} on loopback. */
    private void attack(int port, String requestLine) throws IOException {
        for (int i = 0; i < SLOW_BODY; i++) {
            // whole headers, with the token, then a body that trickles in a byte every 500 ms
            Socket s = connect(port);
            s.getOutputStream().write((requestLine.replace("GET", "POST") + "\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN
                    + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{").getBytes(StandardCharsets.US_ASCII));
            slowLoris.put(s, ' ');
        }
        for (int i = 0; i < IDLE; i++) {
            connect(port); // connects, sends nothing
        }
        for (int i = 0; i < SLOW_LORIS; i++) {
            Socket s = connect(port);
            s.getOutputStream().write((requestLine + "\r\nHost: 127.0.0.1\r\n").getBytes(StandardCharsets.US_ASCII));
            slowLoris.put(s, 'X');
        }
        for (int i = 0; i < HALF_OPEN; i++) {
            connect(port).getOutputStream().write(requestLine.substring(0, 8).getBytes(StandardCharsets.US_ASCII));
        }
        for (int i = 0; i < OVERSIZED_HEADER; i++) {
            // 32 KiB of one header and no end of headers: more than any limit a control endpoint needs
            writeIgnoringRefusal(connect(port), requestLine + "\r\nHost: 127.0.0.1\r\nX-Padding: " + "a".repeat(32 * 1024));
        }
        for (int i = 0; i < OVERSIZED_BODY; i++) {
            // announces 100 MB, sends 32 KiB, then stalls
            writeIgnoringRefusal(connect(port), requestLine.replace("GET", "POST") + "\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                    + TOKEN + "\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n" + "{".repeat(32 * 1024));
        }
    }

    private Socket connect(int port) throws IOException {
        Socket s = new Socket();
        hostile.add(s);
        s.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5_000);
        s.setSoTimeout(1);
        return s;
    }

    /** A server that refuses an oversized request may close before the whole of it is written: that is fine. */
    private static void writeIgnoringRefusal(Socket s, String text) {
        try {
            OutputStream out = s.getOutputStream();
            out.write(text.getBytes(StandardCharsets.US_ASCII));
            out.flush();
        } catch (IOException refused) {
            // the server closed on the oversized request
        }
    }

    private void dripOneByte() {
        for (Map.Entry<Socket, Character> s : slowLoris.entrySet()) {
            try {
                s.getKey().getOutputStream().write(s.getValue());
            } catch (IOException closedByServer) {
                // the server gives up on a trickling connection: that is what it must do
            }
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

    interface Call {
        void run() throws Exception;
    }

    /** Runs {@code call}, fails naming {@code what} if it took {@link #ANSWER_BOUND} or more, returns "what N ms". */
    private static String timed(String what, Call call) throws Exception {
        long start = System.nanoTime();
        try {
            call.run();
        } catch (java.net.http.HttpTimeoutException e) {
            fail(what + " did not answer within the client's " + CLIENT_TIMEOUT.toSeconds() + " s while hostile connections are held");
        }
        long micros = (System.nanoTime() - start) / 1_000;
        assertTrue(micros < ANSWER_BOUND.toNanos() / 1_000, what + " took " + micros / 1000 + " ms (bound " + ANSWER_BOUND.toMillis() + " ms)");
        return what + " " + String.format("%.1f ms", micros / 1000.0);
    }
}
