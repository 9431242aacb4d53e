package io.queueenterprise.replication.node;

import io.queueenterprise.http.HardenedHttpServer;

import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.config.NodeConfig;
import io.queueenterprise.replication.config.NodeConfigReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The admin endpoint, metrics and health over real HTTP on loopback, around {@link FakeNodeControl} (a stand-in
 * for the engine: this layer only; the engine's own behaviour is tested with the engine).
 */
@org.junit.jupiter.api.Tag("integration")
class AdminAndMetricsTest {
    static final String TOKEN = "admin-token-0123456789abcdef";

    @TempDir
    Path tmp;
    Path tokenFile;
    NodeConfig config;
    FakeNodeControl engine;
    QueueNode node;
    AdminClient admin;
    final HttpClient http = HttpClient.newHttpClient();

    /** The three-replica example with this test's token file and any free ports on loopback. */
    static NodeConfig configOnFreePorts(Path tmp, Path tokenFile, String nodeId) throws IOException {
        Path file = tmp.resolve(nodeId + ".yaml");
        Files.writeString(file, Files.readString(Path.of(System.getProperty("user.dir")).resolve(
                "../examples/node-config/three-replicas-replica-0.yaml")).replace("nodeId: replica-0", "nodeId: " + nodeId));
        NodeConfig c = NodeConfigReader.read(file);
        return new NodeConfig(c.version(), c.nodeId(), tmp.resolve("data"), c.peers(), tmp.resolve("peer"), c.queues(),
                new NodeConfig.Admin("127.0.0.1", 0, tokenFile), new NodeConfig.Metrics("127.0.0.1", 0), c.idleStrategy());
    }

    @BeforeEach
    void start() throws IOException {
        tokenFile = tmp.resolve("token");
        Files.writeString(tokenFile, TOKEN + "\n");
        config = configOnFreePorts(tmp, tokenFile, "replica-0");
        engine = new FakeNodeControl(config);
        node = QueueNode.start(config, engine, () -> Map.of("STALE_TERM", 3L, "MALFORMED", 11L),
                () -> java.util.List.of(DroppedFrames.byType("BAD_MAC", "HEARTBEAT", 4),
                        DroppedFrames.byPeer("SENDER_MISMATCH", "replica-1", 2)), Duration.ofHours(1));
        admin = new AdminClient("127.0.0.1:" + node.adminPort(), TOKEN);
    }

    @AfterEach
    void stop() {
        node.close();
    }

    HttpResponse<String> request(String method, String path, String authorization, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.adminPort() + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> scrape(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.metricsPort() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void promoteFollowFenceByTheContractsRules() {
        NodeStatus standby = admin.status();
        assertEquals(NodeStatus.Role.STANDBY, standby.role());
        assertEquals(engine.status(), standby, "the JSON carries the whole NodeStatus");

        NodeStatus leading = admin.promote(5);
        assertEquals(NodeStatus.Role.LEADER, leading.role());
        assertEquals(5, leading.term());
        AdminClientException stale = assertThrows(AdminClientException.class, () -> admin.promote(5));
        assertEquals(409, stale.httpStatus());
        assertEquals("STALE_TERM", stale.errorCode());
        assertEquals("STALE_TERM", assertThrows(AdminClientException.class, () -> admin.follow("replica-1", 4)).errorCode());

        AdminClientException unknown = assertThrows(AdminClientException.class, () -> admin.follow("replica-9", 6));
        assertEquals(400, unknown.httpStatus());
        assertEquals("UNKNOWN_PEER", unknown.errorCode());
        assertEquals("UNKNOWN_PEER", assertThrows(AdminClientException.class, () -> admin.follow("replica-0", 6)).errorCode());

        NodeStatus following = admin.follow("replica-1", 6);
        assertEquals(NodeStatus.Role.FOLLOWER, following.role());
        assertEquals("replica-1", following.leaderNodeId());
        NodeStatus fenced = admin.fence(7);
        assertEquals(NodeStatus.Role.FENCED, fenced.role());
        assertEquals("STALE_TERM", assertThrows(AdminClientException.class, () -> admin.fence(6)).errorCode());
        // the operator fences every answering replica at T before it chooses whom to promote at T
        NodeStatus chosen = admin.promote(7);
        assertEquals(NodeStatus.Role.LEADER, chosen.role());
        assertEquals(7, chosen.term());
        assertEquals("STALE_TERM", assertThrows(AdminClientException.class, () -> admin.promote(7)).errorCode(),
                "only a node fenced at T, leading nothing, may be promoted at T");
        admin.follow("replica-1", 8);
        assertEquals("STALE_TERM", assertThrows(AdminClientException.class, () -> admin.promote(8)).errorCode(),
                "a follower at T is not promoted at T");
    }

    @Test
    void onlyTheTokenGetsInAndEveryRefusalIsCounted() throws Exception {
        assertEquals(401, request("GET", "/v1/status", null, null).statusCode());
        assertEquals(401, request("GET", "/v1/status", "Bearer " + TOKEN + "x", null).statusCode());
        assertEquals(401, request("GET", "/v1/status", "Bearer " + TOKEN.substring(1), null).statusCode());
        assertEquals(401, request("POST", "/v1/promote", "Basic " + TOKEN, "{\"term\":9}").statusCode());
        assertEquals(401, request("GET", "/v2/anything", null, null).statusCode());
        assertEquals(NodeStatus.Role.STANDBY, engine.status().role(), "nothing unauthenticated moved the node");
        HttpResponse<String> status = request("GET", "/v1/status", "bearer " + TOKEN, null);
        assertEquals(200, status.statusCode());
        // the operator's Pinned condition compares this with the cores the kubelet granted
        assertTrue(status.body().contains("\"cpusAllowedList\":\"" + io.queueenterprise.replication.CpusAllowed.list() + "\""), status.body());
        assertEquals(401, assertThrows(AdminClientException.class,
                () -> new AdminClient("127.0.0.1:" + node.adminPort(), "wrong-token-but-long-enough").status()).httpStatus());
        assertTrue(scrape("/metrics").body().contains("qe_admin_unauthorized_requests_total{node=\"replica-0\"} 6.0"),
                scrape("/metrics").body());
    }

    @Test
    void aRotatedTokenFileTakesEffectWithoutRestart() throws Exception {
        String rotated = "rotated-token-fedcba9876543210";
        Files.writeString(tokenFile, rotated);
        Files.setLastModifiedTime(tokenFile, FileTime.from(Instant.now().plusSeconds(5)));
        assertEquals(401, request("GET", "/v1/status", "Bearer " + TOKEN, null).statusCode());
        assertEquals(200, request("GET", "/v1/status", "Bearer " + rotated, null).statusCode());
    }

    @Test
    void aShortTokenIsRefusedAtStart() throws IOException {
        Files.writeString(tokenFile, "short");
        FakeNodeControl other = new FakeNodeControl(config);
        Exception e = assertThrows(RuntimeException.class, () -> QueueNode.start(config, other, Duration.ofHours(1)));
        assertTrue(e.getMessage().contains("at least 16"), e.getMessage());
        assertTrue(other.closed, "a node that cannot start closes its engine");
    }

    @Test
    void malformedRequestsNameWhatIsWrong() throws Exception {
        String auth = "Bearer " + TOKEN;
        assertError(request("POST", "/v1/promote", auth, "{}"), 400, "BAD_REQUEST", "term: is required");
        assertError(request("POST", "/v1/promote", auth, "{\"term\":\"7\"}"), 400, "BAD_REQUEST", "term: \"7\" is not an integer");
        assertError(request("POST", "/v1/promote", auth, "{\"term\":0}"), 400, "BAD_REQUEST", "term: 0 is not an integer");
        assertError(request("POST", "/v1/promote", auth, "{\"term\":1,\"force\":true}"), 400, "BAD_REQUEST", "unknown field force");
        assertError(request("POST", "/v1/promote", auth, "{\"term\":"), 400, "BAD_REQUEST", "body is not JSON");
        assertError(request("POST", "/v1/follow", auth, "{\"term\":3}"), 400, "BAD_REQUEST", "leader: is required");
        assertError(request("POST", "/v1/promote", auth, "x".repeat(5000)), 400, "BAD_REQUEST", "body larger than");
        assertError(request("GET", "/v1/promote", auth, null), 405, "METHOD_NOT_ALLOWED", "/v1/promote takes POST");
        assertError(request("GET", "/v1/elect", auth, null), 404, "NOT_FOUND", "no /v1/elect");
        assertEquals(NodeStatus.Role.STANDBY, engine.status().role());
    }

    @Test
    void oversizedRequestsAreRefused() throws Exception {
        String auth = "Bearer " + TOKEN;
        // chunked, so no Content-Length to refuse it by: the limit holds while the body is read
        HttpResponse<String> chunked = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.adminPort() + "/v1/promote"))
                .header("Authorization", auth).POST(HttpRequest.BodyPublishers.ofInputStream(
                        () -> new java.io.ByteArrayInputStream("x".repeat(5000).getBytes(java.nio.charset.StandardCharsets.US_ASCII))))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertError(chunked, 400, "BAD_REQUEST", "body larger than 4096 bytes");
        // request headers past HardenedHttpServer.MAX_REQUEST_HEADER_BYTES, on either port
        String padding = "p".repeat(HardenedHttpServer.MAX_REQUEST_HEADER_BYTES);
        assertEquals(431, http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.adminPort() + "/v1/status"))
                .header("Authorization", auth).header("X-Padding", padding).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
        assertEquals(431, http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.metricsPort() + "/healthz"))
                .header("X-Padding", padding).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
        assertEquals(NodeStatus.Role.STANDBY, engine.status().role());
        assertEquals(200, request("GET", "/v1/status", auth, null).statusCode(), "the endpoint still serves");
    }

    private static void assertError(HttpResponse<String> response, int status, String code, String messageStart) {
        assertEquals(status, response.statusCode(), response.body());
        assertTrue(response.body().contains("\"error\":\"" + code + "\""), response.body());
        assertTrue(response.body().contains("\"message\":\"" + messageStart.replace("\"", "\\\"")), response.body());
    }

    @Test
    void healthAndReadinessFollowTheRole() throws Exception {
        assertEquals(200, scrape("/healthz").statusCode());
        HttpResponse<String> standby = scrape("/readyz");
        assertEquals(503, standby.statusCode());
        assertTrue(standby.body().contains("STANDBY"), standby.body());
        admin.promote(1);
        assertEquals(200, scrape("/readyz").statusCode());
        admin.follow("replica-1", 2);
        engine.setQueue(queue("orders", QueueStatus.State.CATCHING_UP, List.of()));
        HttpResponse<String> catchingUp = scrape("/readyz");
        assertEquals(503, catchingUp.statusCode());
        assertTrue(catchingUp.body().contains("orders CATCHING_UP"), catchingUp.body());
        engine.setQueue(queue("orders", QueueStatus.State.LIVE, List.of()));
        engine.setQueue(queue("telemetry", QueueStatus.State.LIVE, List.of()));
        assertEquals(200, scrape("/readyz").statusCode());
        engine.close();
        assertEquals(503, scrape("/healthz").statusCode());
    }

    private static QueueStatus queue(String name, QueueStatus.State state, List<QueueStatus.PeerProgress> peers) {
        return new QueueStatus(name, state, 0x4a0000002aL, 0x4a00000028L, 0x4a00000027L, 0x4a00000000L, peers, 123_456, 7,
                "", new QueueStatus.Writer(2_500, 3, "2026-11-23T01:58:10.004Z"),
                new QueueStatus.Resyncs(4, QueueStatus.ResyncCause.WRITER_BEHIND, "behind", "2026-11-23T01:58:10.730Z"),
                new QueueStatus.Quarantines(2, QueueStatus.QuarantineReason.DIVERGENT, "2026-11-23T01:40:00.017Z",
                        "/data/orders/quarantine/20261123T014000.017Z", 20, null));
    }

    @Test
    void metricsReportWhatTheNodeReports() throws Exception {
        admin.promote(3);
        engine.setQueue(queue("orders", QueueStatus.State.LIVE, List.of(
                new QueueStatus.PeerProgress("replica-1", true, 0x4a00000028L, 2, 1_500_000, QueueStatus.State.LIVE),
                new QueueStatus.PeerProgress("replica-2", false, 0x4a00000010L, 26, 40_000_000, QueueStatus.State.CATCHING_UP))));
        String text = scrape("/metrics").body();
        String orders = "node=\"replica-0\",queue=\"orders\"";
        String peer2 = "node=\"replica-0\",peer=\"replica-2\",queue=\"orders\""; // the client sorts labels by name
        assertTrue(text.contains("qe_node_term{node=\"replica-0\"} 3.0"), text);
        assertTrue(text.contains("qe_node_role{node=\"replica-0\",role=\"LEADER\"} 1.0"), text);
        assertTrue(text.contains("qe_node_role{node=\"replica-0\",role=\"STANDBY\"} 0.0"), text);
        assertEquals(0x4a0000002aL, value(text, "qe_queue_last_index{" + orders + "}"));
        assertEquals(0x4a00000028L, value(text, "qe_queue_durable_index{" + orders + "}"));
        assertEquals(0x4a00000027L, value(text, "qe_queue_quorum_index{" + orders + "}"));
        assertEquals(123_456, value(text, "qe_queue_replicated_bytes_total{" + orders + "}"));
        assertEquals(7, value(text, "qe_queue_frames_dropped_total{" + orders + "}"));
        assertEquals(1, value(text, "qe_queue_state{" + orders + ",state=\"LIVE\"}"));
        assertEquals(4, value(text, "qe_queue_resyncs_total{" + orders + "}"));
        assertEquals(3, value(text, "qe_queue_writer_stalls_total{" + orders + "}"));
        assertTrue(text.contains("qe_queue_writer_blocked_seconds{" + orders + "} 2.5"), text);
        assertEquals(2, value(text, "qe_queue_quarantines{" + orders + "}"));
        assertEquals(26, value(text, "qe_peer_lag_excerpts{" + peer2 + "}"));
        assertEquals(0, value(text, "qe_peer_connected{" + peer2 + "}"));
        assertTrue(text.contains("qe_peer_lag_seconds{node=\"replica-0\",peer=\"replica-1\",queue=\"orders\"} 0.0015"), text);
        assertEquals(1, value(text, "qe_peer_state{" + peer2 + ",state=\"CATCHING_UP\"}"));
        assertEquals(0, value(text, "qe_retention_deleted_files_total{" + orders + "}"));
        assertEquals(11, value(text, "qe_node_frames_dropped_total{node=\"replica-0\",reason=\"MALFORMED\"}"));
        assertEquals(3, value(text, "qe_node_frames_dropped_total{node=\"replica-0\",reason=\"STALE_TERM\"}"));
        assertEquals(4, value(text, "qe_node_frames_dropped_by_type_total{node=\"replica-0\",reason=\"BAD_MAC\",type=\"HEARTBEAT\"}"));
        assertEquals(2, value(text, "qe_node_frames_dropped_by_peer_total{node=\"replica-0\",peer=\"replica-1\",reason=\"SENDER_MISMATCH\"}"));
    }

    @Test
    void theAckLatencyHistogramIsTheEnginesIntervalsAddedUp() throws Exception {
        for (int i = 0; i < 10; i++) {
            engine.recordAckLatency("orders", 3_000);      // 3 µs: bucket le=5e-6
        }
        for (int i = 0; i < 5; i++) {
            engine.recordAckLatency("orders", 150_000);    // 150 µs: le=2e-4
        }
        engine.recordAckLatency("orders", 7_000_000_000L); // 7 s: only +Inf
        Map<Double, Double> first = buckets(scrape("/metrics").body(), "orders");
        assertEquals(0, first.get(2e-6));
        assertEquals(10, first.get(5e-6));
        assertEquals(10, first.get(1e-4));
        assertEquals(15, first.get(2e-4));
        assertEquals(15, first.get(5.0));
        assertEquals(16, first.get(Double.POSITIVE_INFINITY));
        // A second interval adds to the first: Prometheus histograms count since start.
        engine.recordAckLatency("orders", 1_000);
        String text = scrape("/metrics").body();
        Map<Double, Double> second = buckets(text, "orders");
        assertEquals(1, second.get(1e-6));
        assertEquals(11, second.get(5e-6));
        assertEquals(17, second.get(Double.POSITIVE_INFINITY));
        assertEquals(17, value(text, "qe_ack_latency_seconds_count{node=\"replica-0\",queue=\"orders\"}"));
        double sum = value(text, "qe_ack_latency_seconds_sum{node=\"replica-0\",queue=\"orders\"}");
        double expected = (10 * 3_000 + 5 * 150_000 + 7_000_000_000L + 1_000) / 1e9;
        assertEquals(expected, sum, expected * 0.001, "sum within HdrHistogram's precision");
        assertEquals(0, buckets(text, "telemetry").get(Double.POSITIVE_INFINITY));
    }

    private static Map<Double, Double> buckets(String text, String queue) {
        Map<Double, Double> buckets = new TreeMap<>();
        Matcher m = Pattern.compile("qe_ack_latency_seconds_bucket\\{node=\"replica-0\",queue=\"" + queue
                + "\",le=\"([^\"]+)\"} (\\S+)").matcher(text);
        while (m.find()) {
            buckets.put(m.group(1).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(m.group(1)),
                    Double.parseDouble(m.group(2)));
        }
        assertEquals(NodeMetrics.ACK_LATENCY_BOUNDS.length, buckets.size(), text);
        return buckets;
    }

    private static double value(String text, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(text);
        assertTrue(m.find(), series + " not in\n" + text);
        return Double.parseDouble(m.group(1));
    }
}
