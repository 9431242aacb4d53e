package io.queueenterprise.replication.node;

import com.fasterxml.jackson.databind.JsonNode;
import io.queueenterprise.replication.NodeStatus;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A client of one node's admin endpoint (docs/node-contract.md): what {@code qe node status|promote|follow|fence}
 * uses. Every call returns the node's status after the request, or throws {@link AdminClientException}.
 */
public final class AdminClient {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final URI base;
    private final String token;
    private final HttpClient http;

    /** @param hostPort {@code host:port} of the admin endpoint; {@code token} the content of its credential file */
    public AdminClient(String hostPort, String token) {
        this.base = URI.create("http://" + hostPort);
        if (base.getHost() == null || base.getPort() < 1) {
            throw new IllegalArgumentException(hostPort + " is not host:port");
        }
        this.token = token.strip();
        this.http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    }

    public NodeStatus status() {
        return call("GET", "/v1/status", null);
    }

    public NodeStatus promote(long term) {
        return call("POST", "/v1/promote", Map.of("term", term));
    }

    public NodeStatus follow(String leader, long term) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("leader", leader);
        body.put("term", term);
        return call("POST", "/v1/follow", body);
    }

    public NodeStatus fence(long term) {
        return call("POST", "/v1/fence", Map.of("term", term));
    }

    private NodeStatus call(String method, String path, Map<String, Object> body) {
        HttpResponse<byte[]> response;
        try {
            HttpRequest.BodyPublisher publisher = body == null ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofByteArray(AdminServer.JSON.writeValueAsBytes(body));
            HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT)
                    .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                    .method(method, publisher).build();
            response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new AdminClientException(0, "UNREACHABLE", "admin endpoint " + base.getAuthority()
                    + " did not answer " + method + " " + path + ": " + (e.getMessage() == null ? e.toString() : e.getMessage()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AdminClientException(0, "UNREACHABLE", "interrupted waiting for " + base.getAuthority(), e);
        }
        try {
            if (response.statusCode() == 200) {
                return AdminServer.JSON.readValue(response.body(), NodeStatus.class);
            }
            JsonNode error = AdminServer.JSON.readTree(response.body());
            String code = error.path("error").asText("HTTP_" + response.statusCode());
            throw new AdminClientException(response.statusCode(), code, code + " (HTTP " + response.statusCode() + "): "
                    + error.path("message").asText(""), null);
        } catch (IOException e) {
            throw new AdminClientException(response.statusCode(), "BAD_RESPONSE", "admin endpoint " + base.getAuthority()
                    + " answered HTTP " + response.statusCode() + " with a body that is not the contract's JSON: " + e.getMessage(), e);
        }
    }
}
