package io.queueenterprise.operator.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.queueenterprise.operator.api.QueueCluster;

/**
 * The operator renders the node-configuration document exactly as the node reads it: checked against the example
 * files the node's own tests read (examples/node-config/), as generic YAML trees, so that neither side's Java
 * classes are the judge.
 */
@org.junit.jupiter.api.Tag("unit")
class NodeConfigDocumentTest {
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Path EXAMPLES = Path.of(System.getProperty("qe.examples.dir", "../examples"), "node-config");

    @Test
    void replicaZeroOfThreeIsTheExampleDocumentExceptAddresses() throws IOException {
        QueueCluster cluster = TestClusters.threeReplicas();
        JsonNode rendered = YAML.readTree(NodeConfigModel.configMapData(cluster, OperatorSettings.defaults()).get("replica-0.yaml"));
        JsonNode example = YAML.readTree(Files.readString(EXAMPLES.resolve("three-replicas-replica-0.yaml")));

        // the example runs three replicas on one host's loopback (three ports); in a cluster peers are the headless Service's names and endpoints bind all
        for (JsonNode peer : rendered.get("peers")) {
            String id = peer.get("id").asText();
            assertEquals(id + ".replica-nodes.trading.svc.cluster.local", peer.get("host").asText());
            assertEquals(NodePaths.REPLICATION_PORT, peer.get("replicationPort").asInt(), "one replica per pod: one port");
            assertEquals(NodePaths.CLIENT_PORT, peer.get("clientPort").asInt(), "one replica per pod: one client port");
        }
        assertEquals("0.0.0.0", rendered.at("/admin/bindAddress").asText());
        assertEquals("0.0.0.0", rendered.at("/metrics/bindAddress").asText());
        replaceAddresses(rendered);
        replaceAddresses(example);
        assertEquals(example, rendered, "rendered document differs from the example beyond addresses");
    }

    @Test
    void everyRenderedDocumentHasTheExamplesShape() throws IOException {
        Map<String, String> shapes = new TreeMap<>();
        for (Path example : examples()) {
            shapes.putAll(shape(YAML.readTree(Files.readString(example)), ""));
        }
        for (QueueCluster cluster : List.of(TestClusters.threeReplicas(), TestClusters.singleNode())) {
            for (Map.Entry<String, String> document : NodeConfigModel.configMapData(cluster, OperatorSettings.defaults()).entrySet()) {
                Map<String, String> rendered = shape(YAML.readTree(document.getValue()), "");
                for (Map.Entry<String, String> path : rendered.entrySet()) {
                    assertEquals(shapes.get(path.getKey()), path.getValue(),
                        document.getKey() + ": " + path.getKey() + " is not in any example (or has another type)");
                }
            }
        }
    }

    @Test
    void singleNodeDocumentHasEveryKeyOfTheSmallestExample() throws IOException {
        Map<String, String> smallest = shape(YAML.readTree(Files.readString(EXAMPLES.resolve("single-node.yaml"))), "");
        Map<String, String> rendered = shape(YAML.readTree(
            NodeConfigModel.configMapData(TestClusters.singleNode(), OperatorSettings.defaults()).get("solo-0.yaml")), "");
        TreeSet<String> missing = new TreeSet<>(smallest.keySet());
        missing.removeAll(rendered.keySet());
        assertTrue(missing.isEmpty(), "rendered single-node document lacks " + missing);
    }

    @Test
    void eachReplicaGetsItsOwnNodeIdAndTheSamePeers() throws IOException {
        Map<String, String> data = NodeConfigModel.configMapData(TestClusters.threeReplicas(), OperatorSettings.defaults());
        assertEquals(List.of("replica-0.yaml", "replica-1.yaml", "replica-2.yaml"), new ArrayList<>(data.keySet()));
        JsonNode peers = null;
        for (int replica = 0; replica < 3; replica++) {
            JsonNode document = YAML.readTree(data.get("replica-" + replica + ".yaml"));
            assertEquals("replica-" + replica, document.get("nodeId").asText());
            if (peers != null) {
                assertEquals(peers, document.get("peers"));
            }
            peers = document.get("peers");
        }
    }

    private static List<Path> examples() throws IOException {
        try (var files = Files.list(EXAMPLES)) {
            List<Path> examples = files.filter(file -> file.toString().endsWith(".yaml")).sorted().toList();
            assertTrue(examples.size() >= 2, "examples in " + EXAMPLES.toAbsolutePath());
            return examples;
        }
    }

    private static void replaceAddresses(JsonNode document) {
        for (JsonNode peer : document.get("peers")) {
            ((ObjectNode) peer).put("host", "<address>");
            ((ObjectNode) peer).put("replicationPort", -1);
            if (peer.has("clientPort")) {
                ((ObjectNode) peer).put("clientPort", -1);
            }
        }
        ((ObjectNode) document.get("admin")).put("bindAddress", "<address>");
        ((ObjectNode) document.get("metrics")).put("bindAddress", "<address>");
    }

    /** path → node type, list elements under "[]": the document's key set and scalar types, values ignored. */
    private static Map<String, String> shape(JsonNode node, String path) {
        Map<String, String> shape = new TreeMap<>();
        shape.put(path.isEmpty() ? "/" : path, node.getNodeType().name());
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> field : node.properties()) {
                shape.putAll(shape(field.getValue(), path + "/" + field.getKey()));
            }
        } else if (node.isArray()) {
            for (JsonNode element : node) {
                shape.putAll(shape(element, path + "/[]"));
            }
        }
        return shape;
    }
}
