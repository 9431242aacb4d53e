package io.queueenterprise.replication.node;

import io.queueenterprise.http.HardenedHttpServer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queueenterprise.replication.NodeControl;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.ReplicationException;
import io.queueenterprise.replication.StaleTermException;
import io.queueenterprise.replication.config.NodeConfig;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node's admin endpoint (docs/node-contract.md, API v1): status, promote, follow, fence, for authenticated
 * callers only (bearer token from {@code admin.credentialFile}). Its own server and bounded pool
 * ({@link HardenedHttpServer}), apart from the metrics port, so that neither scrapes nor hostile connections can starve a
 * promote or a fence. Bodies are read without holding a thread; the calls on the node run one at a time: these are
 * rare control calls, and serialising them keeps promote/follow/fence from racing each other here.
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
    private final AtomicLong unauthorized = new AtomicLong();
    /** One control call on the node at a time (the JDK server this replaced had one thread for that). */
    private final Object control = new Object();
    private Server server;

    private AdminServer(NodeControl node, NodeConfig config, AdminToken token) {
        this.node = node;
        this.config = config;
        this.token = token;
    }

    /** Binds {@code admin.bindAddress:admin.port} (port 0: any free port, see {@link #port()}) and serves. */
    public static AdminServer start(NodeControl node, NodeConfig config) throws IOException {
        AdminToken token = new AdminToken(config.admin().credentialFile());
        AdminServer admin = new AdminServer(node, config, token);
        admin.server = HardenedHttpServer.start("admin", config.nodeId(), config.admin().bindAddress(), config.admin().port(),
                admin.new AdminHandler());
        return admin;
    }

    public int port() {
        return HardenedHttpServer.port(server);
    }

    /** Requests refused with 401 since start. */
    public long unauthorizedRequests() {
        return unauthorized.get();
    }

    private final class AdminHandler extends Handler.Abstract {
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            if (!token.accepts(request.getHeaders().get(HttpHeader.AUTHORIZATION))) {
                unauthorized.incrementAndGet();
                response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer");
                send(response, callback, 401, error("UNAUTHORIZED", "a valid bearer token (admin.credentialFile) is required"));
                return true;
            }
            String path = request.getHttpURI().getDecodedPath();
            String method = request.getMethod();
            String expected = "/v1/status".equals(path) ? "GET" : "POST";
            if (!Set.of("/v1/status", "/v1/promote", "/v1/follow", "/v1/fence").contains(path)) {
                send(response, callback, 404, error("NOT_FOUND", "no " + path + "; the API is /v1/status, /v1/promote, /v1/follow, /v1/fence"));
                return true;
            }
            if (!expected.equals(method)) {
                response.getHeaders().put(HttpHeader.ALLOW, expected);
                send(response, callback, 405, error("METHOD_NOT_ALLOWED", path + " takes " + expected + ", not " + method));
                return true;
            }
            if ("GET".equals(method)) {
                answer(path, null, response, callback);
                return true;
            }
            if (request.getLength() > MAX_BODY) { // refused before reading a byte of it
                send(response, callback, 400, error("BAD_REQUEST", "body larger than " + MAX_BODY + " bytes"));
                return true;
            }
            new BodyReader(request, bytes -> answer(path, bytes, response, callback),
                    () -> send(response, callback, 400, error("BAD_REQUEST", "body larger than " + MAX_BODY + " bytes")),
                    callback::failed).run();
            return true;
        }
    }

    /**
     * Gathers a request body as it arrives, up to {@link #MAX_BODY} bytes, without a thread waiting on a slow
     * sender (Jetty's read/demand loop); a body that stalls is ended by the connection's timeouts (HardenedHttpServer).
     */
    private static final class BodyReader implements Runnable {
        private final Request request;
        private final java.util.function.Consumer<byte[]> onBody;
        private final Runnable onTooLarge;
        private final java.util.function.Consumer<Throwable> onFailure;
        private final java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();

        BodyReader(Request request, java.util.function.Consumer<byte[]> onBody, Runnable onTooLarge,
                   java.util.function.Consumer<Throwable> onFailure) {
            this.request = request;
            this.onBody = onBody;
            this.onTooLarge = onTooLarge;
            this.onFailure = onFailure;
        }

        @Override
        public void run() {
            while (true) {
                Content.Chunk chunk = request.read();
                if (chunk == null) {
                    request.demand(this);
                    return;
                }
                if (Content.Chunk.isFailure(chunk)) {
                    onFailure.accept(chunk.getFailure());
                    return;
                }
                ByteBuffer data = chunk.getByteBuffer();
                boolean tooLarge = bytes.size() + data.remaining() > MAX_BODY;
                if (!tooLarge) {
                    byte[] part = new byte[data.remaining()];
                    data.get(part);
                    bytes.writeBytes(part);
                }
                boolean last = chunk.isLast();
                chunk.release();
                if (tooLarge) {
                    onTooLarge.run();
                    return;
                }
                if (last) {
                    onBody.accept(bytes.toByteArray());
                    return;
                }
            }
        }
    }

    /** Acts on {@code path} with its request {@code bytes} (null for GET) and answers. */
    private void answer(String path, byte[] bytes, Response response, Callback callback) {
        int status;
        byte[] json;
        synchronized (control) {
            try {
                NodeStatus nodeStatus = switch (path) {
                    case "/v1/promote" -> {
                        JsonNode body = body(bytes, Set.of("term"));
                        node.promote(term(body));
                        yield node.status();
                    }
                    case "/v1/follow" -> {
                        JsonNode body = body(bytes, Set.of("leader", "term"));
                        String leader = leader(body);
                        node.follow(leader, term(body));
                        yield node.status();
                    }
                    case "/v1/fence" -> {
                        node.fence(term(body(bytes, Set.of("term"))));
                        yield node.status();
                    }
                    default -> node.status();
                };
                status = 200;
                json = JSON.writeValueAsBytes(nodeStatus);
            } catch (BadRequest e) {
                status = 400;
                json = error(e.code, e.getMessage());
            } catch (StaleTermException e) {
                status = 409;
                json = error("STALE_TERM", e.getMessage());
            } catch (IllegalArgumentException e) { // NodeControl.follow: not a configured peer, or this node
                status = 400;
                json = error("UNKNOWN_PEER", e.getMessage());
            } catch (ReplicationException | IllegalStateException e) {
                status = 503;
                json = error("NODE_ERROR", String.valueOf(e.getMessage()));
            } catch (JsonProcessingException | RuntimeException e) { // a bug, not a refusal: say so rather than drop the connection
                status = 500;
                json = error("INTERNAL", e.toString());
            }
        }
        send(response, callback, status, json);
    }

    /** The request's JSON object, refusing any field outside {@code allowed}. */
    private static JsonNode body(byte[] bytes, Set<String> allowed) {
        if (bytes.length > MAX_BODY) {
            throw new BadRequest("BAD_REQUEST", "body larger than " + MAX_BODY + " bytes");
        }
        JsonNode body;
        try {
            body = JSON.readTree(bytes);
        } catch (IOException e) {
            throw new BadRequest("BAD_REQUEST", "body is not JSON: "
                    + (e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage()));
        }
        if (body == null || body.isMissingNode() || !body.isObject()) {
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

    private static void send(Response response, Callback callback, int status, byte[] json) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, json.length);
        response.write(true, ByteBuffer.wrap(json), callback);
    }

    @Override
    public void close() {
        HardenedHttpServer.stop(server);
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
