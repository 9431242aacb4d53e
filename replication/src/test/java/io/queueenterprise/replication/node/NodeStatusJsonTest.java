package io.queueenterprise.replication.node;

import com.fasterxml.jackson.databind.JsonNode;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The status JSON is API v1 (docs/node-contract.md, "NodeStatus"): fields are only ever added. A v1 reader (here the
 * admin client, which {@code qe node status} uses) reads a newer node's status with fields it does not know, and an
 * older node's status without the newer fields; and no documented field is renamed or dropped.
 */
@org.junit.jupiter.api.Tag("unit")
class NodeStatusJsonTest {

    /** A status as a node that predates transport, peer addresses and the queue's problem fields sent it. */
    private static final String OLDER_NODE = """
            {"nodeId":"replica-1","role":"FOLLOWER","term":3,"leaderNodeId":"replica-0","cpusAllowedList":"0-1",
             "queues":[{"name":"orders","state":"LIVE","lastIndex":5,"durableIndex":5,"quorumIndex":5,"firstIndex":0,
                        "peers":[],"bytesReplicated":42,"framesDropped":0}]}""";

    @Test
    void anOlderNodesStatusReadsAsNothingToReport() throws Exception {
        NodeStatus status = AdminServer.JSON.readValue(OLDER_NODE, NodeStatus.class);
        assertEquals(NodeStatus.Transport.UNKNOWN, status.transport());
        assertEquals(List.of(), status.peerAddresses());
        QueueStatus queue = status.queues().get(0);
        assertEquals(5, queue.lastIndex());
        assertEquals("", queue.stateDetail());
        assertEquals(QueueStatus.Writer.NONE, queue.writer());
        assertEquals(QueueStatus.Resyncs.NONE, queue.resyncs());
        assertEquals(QueueStatus.Quarantines.NONE, queue.quarantines());
        assertEquals(NodeStatus.Lease.NONE, status.lease());
        assertEquals(null, status.identity(), "an older node reports no identity");
    }

    @Test
    void fieldsANewerNodeAddsAreIgnored() throws Exception {
        String newer = OLDER_NODE.replace("\"term\":3,", "\"term\":3,\"somethingNew\":{\"a\":1},")
                .replace("\"framesDropped\":0", "\"framesDropped\":0,\"writer\":{\"blockedMillis\":7,\"stalls\":1,\"lastStallAt\":null,\"newer\":true},\"other\":[1]");
        NodeStatus status = AdminServer.JSON.readValue(newer, NodeStatus.class);
        assertEquals(3, status.term());
        assertEquals(7, status.queues().get(0).writer().blockedMillis());
    }

    @Test
    void theFieldNamesAreTheDocumentedOnesAndSurviveARoundTrip() throws Exception {
        NodeStatus status = new NodeStatus("replica-1", NodeStatus.Role.FOLLOWER, 3, "replica-0", List.of(
                new QueueStatus("orders", QueueStatus.State.CATCHING_UP, 5, 5, 4, 0, List.of(
                        new QueueStatus.PeerProgress("replica-2", true, 5, 0, 0, QueueStatus.State.LIVE)), 42, 1,
                        "its writer has been blocked in the store for 2 s",
                        new QueueStatus.Writer(2_100, 1, "2026-11-23T01:58:10.004Z"),
                        new QueueStatus.Resyncs(1, QueueStatus.ResyncCause.WRITER_BEHIND, "behind", "2026-11-23T01:58:10.730Z"),
                        new QueueStatus.Quarantines(1, QueueStatus.QuarantineReason.DAMAGED, "2026-11-23T01:40:00.017Z",
                                "/data/orders/quarantine/20261123T014000.017Z", 158, "damaged"))),
                "0-1", new NodeStatus.Transport(false, "down", 2, "closed", "2026-11-23T01:56:49.120Z"),
                List.of(new NodeStatus.PeerAddress("replica-2", "replica-2.qe", false, "does not resolve", "does not resolve",
                        "2026-11-23T01:57:02.310Z", true, "a1b2c3d4")),
                new NodeStatus.Lease(true, true, true, 2000, 1500, List.of(new NodeStatus.PeerEcho("replica-2", 80))),
                new NodeStatus.Identity("8FBvMmmDXGuOl73jPyBP8QJxXJSYolsF6peAUF0OCqc=", "f0506f32", true));
        JsonNode json = AdminServer.JSON.readTree(AdminServer.JSON.writeValueAsBytes(status));
        assertEquals(Set.of("nodeId", "role", "term", "leaderNodeId", "queues", "cpusAllowedList", "transport", "peerAddresses",
                "lease", "identity"), names(json));
        // the operator pins what it reads at identity.publicKey: that name is the contract
        assertEquals(Set.of("publicKey", "fingerprint", "persistent"), names(json.path("identity")));
        assertEquals("8FBvMmmDXGuOl73jPyBP8QJxXJSYolsF6peAUF0OCqc=", json.path("identity").path("publicKey").asText());
        assertTrue(json.path("identity").path("persistent").isBoolean());
        assertEquals(Set.of("acknowledging", "held", "confirmed", "timeoutMillis", "sinceMillisAgo", "peers"), names(json.path("lease")));
        assertEquals(Set.of("nodeId", "echoedMillisAgo"), names(json.path("lease").path("peers").path(0)));
        assertEquals(Set.of("up", "problem", "restarts", "lastRestartCause", "lastRestartAt"), names(json.path("transport")));
        assertEquals(Set.of("nodeId", "host", "resolved", "problem", "lastProblem", "lastProblemAt", "identityPinned",
                "identityFingerprint"), names(json.path("peerAddresses").path(0)));
        JsonNode queue = json.path("queues").path(0);
        assertEquals(Set.of("name", "state", "lastIndex", "durableIndex", "quorumIndex", "firstIndex", "peers",
                "bytesReplicated", "framesDropped", "stateDetail", "writer", "resyncs", "quarantines"), names(queue));
        assertEquals(Set.of("nodeId", "connected", "durableIndex", "lagExcerpts", "lagNanos", "state"), names(queue.path("peers").path(0)));
        assertEquals(Set.of("blockedMillis", "stalls", "lastStallAt"), names(queue.path("writer")));
        assertEquals(Set.of("count", "lastCause", "lastDetail", "lastAt"), names(queue.path("resyncs")));
        assertEquals(Set.of("count", "lastReason", "lastAt", "lastDirectory", "lastExcerpts", "lastDetail"), names(queue.path("quarantines")));
        assertEquals("WRITER_BEHIND", queue.path("resyncs").path("lastCause").asText());
        assertTrue(json.path("transport").path("up").isBoolean());

        assertEquals(status, AdminServer.JSON.readValue(AdminServer.JSON.writeValueAsBytes(status), NodeStatus.class));
    }

    /** The object's field names (their order is not part of the contract). */
    private static Set<String> names(JsonNode object) {
        Set<String> names = new HashSet<>();
        object.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
