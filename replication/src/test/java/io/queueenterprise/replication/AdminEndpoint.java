package io.queueenterprise.replication;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queueenterprise.replication.config.NodeConfig;
import io.queueenterprise.replication.node.AdminServer;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A node's real admin endpoint (HTTP on loopback, bearer token), started around an in-process node: the tests read
 * {@code GET /v1/status} as JSON, as the operator and {@code qe node status} do, rather than the Java record.
 */
final class AdminEndpoint implements AutoCloseable {
    private static final String NEW_TOKEN = "status-test-admin-token-0123456789";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final AdminServer server;
    private final String token;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private AdminEndpoint(AdminServer server, String token) {
        this.server = server;
        this.token = token;
    }

    /** Serves {@code node}'s admin API on a free loopback port, with a token written to the config's credential file. */
    static AdminEndpoint start(ReplicationNode node) throws IOException {
        NodeConfig config = node.config();
        Path tokenFile = config.admin().credentialFile();
        if (!Files.exists(tokenFile)) {
            Files.writeString(tokenFile, NEW_TOKEN + "\n");
        }
        return new AdminEndpoint(AdminServer.start(node, config), Files.readString(tokenFile).strip());
    }

    /** {@code GET /v1/status} as the JSON tree it is, 200 or an assertion error naming what came instead. */
    JsonNode status() {
        HttpResponse<String> response;
        try {
            response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/status"))
                    .timeout(Duration.ofSeconds(40)).header("Authorization", "Bearer " + token).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new AssertionError("no status from the admin endpoint: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        if (response.statusCode() != 200) {
            throw new AssertionError("GET /v1/status answered " + response.statusCode() + ": " + response.body());
        }
        try {
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new AssertionError("GET /v1/status is not JSON: " + response.body(), e);
        }
    }

    /** The JSON of {@code queue} in {@code status}. */
    static JsonNode queue(JsonNode status, String queue) {
        for (JsonNode q : status.path("queues")) {
            if (q.path("name").asText().equals(queue)) {
                return q;
            }
        }
        throw new AssertionError("no queue " + queue + " in " + status);
    }

    @Override
    public void close() {
        server.close();
    }
}
