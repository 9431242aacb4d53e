package io.queueenterprise.replication.node;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.queueenterprise.replication.NodeControl;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.ReplicationException;
import io.queueenterprise.replication.StaleTermException;
import io.queueenterprise.replication.config.NodeConfig;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node's admin endpoint (docs/node-contract.md, API v1): status, promote, follow, fence, for authenticated
 * callers only (bearer token from {@code admin.credentialFile}). One request at a time on one daemon thread: these
 * are rare control calls, and serialising them keeps promote/follow/fence from racing each other here.
 */
public final class AdminServer implements AutoCloseable {
    /**
     * The API's JSON. Reading, fields this build does not know are ignored: API v1 only ever adds fields, so this
     * client (qe node status) reads a newer node's status too.
     */
    static final ObjectMapper JSON = new ObjectMapper()
            .configure(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    /** Control bodies are a few dozen bytes; anything much larger is not a control request. */
    private static final int MAX_BODY = 4096;

    private final NodeControl node;
    private final NodeConfig config;
    private final AdminToken token;
    private final HttpServer server;
    private final ExecutorService executor;
    private final AtomicLong unauthorized = new AtomicLong();

    private AdminServer(NodeControl node, NodeConfig config, AdminToken token, HttpServer server, ExecutorService executor) {
        this.node = node;
        this.config = config;
        this.token = token;
        this.server = server;
        this.executor = executor;
    }

    /** Binds {@code admin.bindAddress:admin.port} (port 0: any free port, see {@link #port()}) and serves. */
    public static AdminServer start(NodeControl node, NodeConfig config) throws IOException {
        AdminToken token = new AdminToken(config.admin().credentialFile());
        HttpServer server = HttpEndpoints.bind("admin", config.admin().bindAddress(), config.admin().port());
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "qe-admin-" + config.nodeId());
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        AdminServer admin = new AdminServer(node, config, token, server, executor);
        server.createContext("/", admin::handle);
        server.start();
        return admin;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** Requests refused with 401 since start. */
    public long unauthorizedRequests() {
        return unauthorized.get();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!token.accepts(exchange.getRequestHeaders().getFirst("Authorization"))) {
                unauthorized.incrementAndGet();
                exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
                send(exchange, 401, error("UNAUTHORIZED", "a valid bearer token (admin.credentialFile) is required"));
                return;
            }
            String path = exchange.getRequestURI().getPath();
            String method = exchange.getRequestMethod();
            String expected = "/v1/status".equals(path) ? "GET" : "POST";
            if (!Set.of("/v1/status", "/v1/promote", "/v1/follow", "/v1/fence").contains(path)) {
                send(exchange, 404, error("NOT_FOUND", "no " + path + "; the API is /v1/status, /v1/promote, /v1/follow, /v1/fence"));
                return;
            }
            if (!expected.equals(method)) {
                exchange.getResponseHeaders().set("Allow", expected);
                send(exchange, 405, error("METHOD_NOT_ALLOWED", path + " takes " + expected + ", not " + method));
                return;
            }
            try {
                NodeStatus status = switch (path) {
                    case "/v1/promote" -> {
                        JsonNode body = body(exchange, Set.of("term"));
                        node.promote(term(body));
                        yield node.status();
                    }
                    case "/v1/follow" -> {
                        JsonNode body = body(exchange, Set.of("leader", "term"));
                        String leader = leader(body);
                        node.follow(leader, term(body));
                        yield node.status();
                    }
                    case "/v1/fence" -> {
                        node.fence(term(body(exchange, Set.of("term"))));
                        yield node.status();
                    }
                    default -> node.status();
                };
                send(exchange, 200, JSON.writeValueAsBytes(status));
            } catch (BadRequest e) {
                send(exchange, 400, error(e.code, e.getMessage()));
            } catch (StaleTermException e) {
                send(exchange, 409, error("STALE_TERM", e.getMessage()));
            } catch (IllegalArgumentException e) { // NodeControl.follow: not a configured peer, or this node
                send(exchange, 400, error("UNKNOWN_PEER", e.getMessage()));
            } catch (ReplicationException | IllegalStateException e) {
                send(exchange, 503, error("NODE_ERROR", String.valueOf(e.getMessage())));
            } catch (RuntimeException e) { // a bug, not a refusal: say so rather than drop the connection
                send(exchange, 500, error("INTERNAL", e.toString()));
            }
        }
    }

    /** The request's JSON object, refusing any field outside {@code allowed}. */
    private static JsonNode body(HttpExchange exchange, Set<String> allowed) throws IOException {
        byte[] bytes;
        try (InputStream in = exchange.getRequestBody()) {
            bytes = in.readNBytes(MAX_BODY + 1);
        }
        if (bytes.length > MAX_BODY) {
            throw new BadRequest("BAD_REQUEST", "body larger than " + MAX_BODY + " bytes");
        }
        JsonNode body;
        try {
            body = JSON.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw new BadRequest("BAD_REQUEST", "body is not JSON: " + e.getOriginalMessage());
        }
        if (body == null || !body.isObject()) {
            throw new BadRequest("BAD_REQUEST", "body must be a JSON object with " + String.join(", ", allowed));
        }
        for (Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!allowed.contains(name)) {
                throw new BadRequest("BAD_REQUEST", "unknown field " + name);
            }
        }
        return body;
    }

    private static long term(JsonNode body) {
        JsonNode term = body.get("term");
        if (term == null || !term.isIntegralNumber() || !term.canConvertToLong() || term.asLong() < 1) {
            throw new BadRequest("BAD_REQUEST", "term: " + (term == null ? "is required" : term + " is not an integer of at least 1"));
        }
        return term.asLong();
    }

    private String leader(JsonNode body) {
        JsonNode leader = body.get("leader");
        if (leader == null || !leader.isTextual()) {
            throw new BadRequest("BAD_REQUEST", "leader: " + (leader == null ? "is required" : leader + " is not a string"));
        }
        String id = leader.asText();
        if (id.equals(config.nodeId())) {
            throw new BadRequest("UNKNOWN_PEER", "leader: " + id + " is this node; promote it instead");
        }
        if (config.peers().stream().noneMatch(p -> p.id().equals(id))) {
            throw new BadRequest("UNKNOWN_PEER", "leader: " + id + " is not a configured peer");
        }
        return id;
    }

    private static byte[] error(String code, String message) {
        try {
            return JSON.writeValueAsBytes(Map.of("error", code, "message", message));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void send(HttpExchange exchange, int status, byte[] json) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, json.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(json);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    /** A request the node cannot act on: 400 with {@code code}. */
    private static final class BadRequest extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String code;

        BadRequest(String code, String message) {
            super(message, null, false, false);
            this.code = code;
        }
    }
}
