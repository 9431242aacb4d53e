package io.queueenterprise.operator.failover;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A STAND-IN for the queue node's admin endpoint (the node is built elsewhere and not on main yet): a JDK HttpServer
 * on loopback speaking API v1 as docs/node-contract.md documents it — bearer token, status, promote/follow/fence
 * with the term rules (promote needs a higher term, or the one it was fenced at; follow at least as high, equal only with the same leader;
 * fence records the term), 401, 409 STALE_TERM, 400 UNKNOWN_PEER, 400 BAD_REQUEST. It holds no queue; durable
 * indexes are set by the test. Every accepted state change is appended to a journal shared with the test.
 */
final class StandInNode implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String nodeId;
    private final String token;
    private final Set<String> peers;
    private final List<String> journal;
    private final HttpServer server;
    private final Map<String, Long> durableIndexes = new LinkedHashMap<>();
    private String role = "STANDBY";
    private long term;
    private String leader;
    private int unauthorized;

    StandInNode(String nodeId, String token, Set<String> peers, List<String> journal) throws IOException {
        this.nodeId = nodeId;
        this.token = token;
        this.peers = peers;
        this.journal = journal;
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v1/", this::handle);
        server.start();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    AdminClient client(String withToken) {
        return new AdminClient(HttpClient.newHttpClient(), nodeId, uri(), withToken, Duration.ofSeconds(5));
    }

    synchronized StandInNode durable(String queue, long index) {
        durableIndexes.put(queue, index);
        return this;
    }

    synchronized StandInNode state(String newRole, long newTerm, String newLeader) {
        role = newRole;
        term = newTerm;
        leader = newLeader;
        return this;
    }

    synchronized String role() {
        return role;
    }

    synchronized long term() {
        return term;
    }

    synchronized String leader() {
        return leader;
    }

    synchronized int unauthorized() {
        return unauthorized;
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            synchronized (this) {
                String presented = exchange.getRequestHeaders().getFirst("Authorization");
                if (presented == null || !MessageDigest.isEqual(presented.getBytes(StandardCharsets.UTF_8),
                    ("Bearer " + token).getBytes(StandardCharsets.UTF_8))) {
                    unauthorized++;
                    reply(exchange, 401, error("UNAUTHORIZED", "missing or wrong bearer token"));
                    return;
                }
                String path = exchange.getRequestURI().getPath();
                if (path.equals("/v1/status") && exchange.getRequestMethod().equals("GET")) {
                    reply(exchange, 200, status());
                    return;
                }
                if (!exchange.getRequestMethod().equals("POST")) {
                    reply(exchange, 405, error("BAD_REQUEST", "method"));
                    return;
                }
                JsonNode body = JSON.readTree(exchange.getRequestBody());
                if (body == null || !body.has("term") || !body.get("term").canConvertToLong()) {
                    reply(exchange, 400, error("BAD_REQUEST", "term: a number is required"));
                    return;
                }
                long requested = body.get("term").asLong();
                switch (path) {
                    case "/v1/promote" -> {
                        // as the node: a higher term, or the term it was fenced at (the operator fences before it promotes)
                        if (requested < term || (requested == term && !("FENCED".equals(role) && leader == null))) {
                            reply(exchange, 409, error("STALE_TERM", "promote at " + requested + " but term " + term + " was seen"));
                            return;
                        }
                        state("LEADER", requested, nodeId);
                    }
                    case "/v1/follow" -> {
                        String newLeader = body.path("leader").asText(null);
                        if (newLeader == null) {
                            reply(exchange, 400, error("BAD_REQUEST", "leader: required"));
                            return;
                        }
                        if (!peers.contains(newLeader) || newLeader.equals(nodeId)) {
                            reply(exchange, 400, error("UNKNOWN_PEER", newLeader + " is not a peer"));
                            return;
                        }
                        if (requested < term || (requested == term && leader != null && !leader.equals(newLeader))) {
                            reply(exchange, 409, error("STALE_TERM", "follow " + newLeader + " at " + requested + ", seen " + term));
                            return;
                        }
                        state("FOLLOWER", requested, newLeader);
                    }
                    case "/v1/fence" -> {
                        if (requested < term) {
                            reply(exchange, 409, error("STALE_TERM", "fence at " + requested + ", seen " + term));
                            return;
                        }
                        state("FENCED", requested, null);
                    }
                    default -> {
                        reply(exchange, 404, error("BAD_REQUEST", "no such request " + path));
                        return;
                    }
                }
                journal.add(path.substring("/v1/".length()) + " " + nodeId + " " + requested);
                reply(exchange, 200, status());
            }
        }
    }

    private Map<String, Object> status() {
        List<Map<String, Object>> queues = new ArrayList<>();
        durableIndexes.forEach((queue, index) -> {
            Map<String, Object> q = new LinkedHashMap<>();
            q.put("name", queue);
            q.put("state", role.equals("LEADER") || role.equals("FOLLOWER") ? "LIVE" : "STOPPED");
            q.put("lastIndex", index);
            q.put("durableIndex", index);
            q.put("quorumIndex", -1);
            q.put("firstIndex", index < 0 ? -1 : 0);
            q.put("peers", List.of());
            q.put("bytesReplicated", 0);
            q.put("framesDropped", 0);
            queues.add(q);
        });
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("nodeId", nodeId);
        status.put("role", role);
        status.put("term", term);
        status.put("leaderNodeId", leader);
        status.put("queues", queues);
        return status;
    }

    private static Map<String, Object> error(String code, String message) {
        return Map.of("error", code, "message", message);
    }

    private static void reply(HttpExchange exchange, int code, Object body) throws IOException {
        byte[] bytes = JSON.writeValueAsBytes(body);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(code, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
