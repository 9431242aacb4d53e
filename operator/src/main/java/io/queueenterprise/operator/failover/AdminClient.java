package io.queueenterprise.operator.failover;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The operator's side of a node's admin endpoint, API v1 (docs/node-contract.md): status, promote, follow, fence,
 * each with {@code Authorization: Bearer <token>}. One instance per node; thread-safe (the JDK client is).
 * Every failure is an {@link AdminException} with a reason the failover logic can act on.
 */
public final class AdminClient {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http;
    private final String node;
    private final URI base;
    private final String token;
    private final Duration timeout;

    public AdminClient(HttpClient http, String node, URI base, String token, Duration timeout) {
        this.http = http;
        this.node = node;
        this.base = base;
        this.token = token;
        this.timeout = timeout;
    }

    public String node() {
        return node;
    }

    public NodeStatusView status() throws AdminException {
        return send(HttpRequest.newBuilder(base.resolve("/v1/status")).GET());
    }

    public NodeStatusView promote(long term) throws AdminException {
        return post("/v1/promote", Map.of("term", term));
    }

    public NodeStatusView follow(String leader, long term) throws AdminException {
        return post("/v1/follow", Map.of("leader", leader, "term", term));
    }

    public NodeStatusView fence(long term) throws AdminException {
        return post("/v1/fence", Map.of("term", term));
    }

    private NodeStatusView post(String path, Map<String, Object> body) throws AdminException {
        try {
            return send(HttpRequest.newBuilder(base.resolve(path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a request body", e);
        }
    }

    private NodeStatusView send(HttpRequest.Builder request) throws AdminException {
        HttpResponse<String> response;
        try {
            response = http.send(request.timeout(timeout).header("Authorization", "Bearer " + token).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new AdminException(AdminException.Reason.UNREACHABLE, node, "admin endpoint " + base + " unreachable: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AdminException(AdminException.Reason.UNREACHABLE, node, "interrupted while calling " + base, e);
        }
        int code = response.statusCode();
        if (code == 200) {
            try {
                return JSON.readValue(response.body(), NodeStatusView.class);
            } catch (JsonProcessingException e) {
                throw new AdminException(AdminException.Reason.PROTOCOL, node, "unreadable NodeStatus: " + e.getOriginalMessage(), e);
            }
        }
        String error = errorCode(response.body());
        String message = "HTTP " + code + " " + error + ": " + errorMessage(response.body());
        AdminException.Reason reason = switch (code) {
            case 401 -> AdminException.Reason.UNAUTHORIZED;
            case 409 -> "STALE_TERM".equals(error) ? AdminException.Reason.STALE_TERM : AdminException.Reason.PROTOCOL;
            case 400 -> "UNKNOWN_PEER".equals(error) ? AdminException.Reason.UNKNOWN_PEER : AdminException.Reason.PROTOCOL;
            default -> AdminException.Reason.PROTOCOL;
        };
        throw new AdminException(reason, node, message, null);
    }

    private static String errorCode(String body) {
        return field(body, "error");
    }

    private static String errorMessage(String body) {
        String message = field(body, "message");
        return message.isEmpty() ? body : message;
    }

    private static String field(String body, String name) {
        try {
            JsonNode tree = JSON.readTree(body);
            return tree != null && tree.hasNonNull(name) ? tree.get(name).asText() : "";
        } catch (JsonProcessingException notJson) {
            return "";
        }
    }
}
