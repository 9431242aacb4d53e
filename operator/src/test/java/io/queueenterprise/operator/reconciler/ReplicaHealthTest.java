package io.queueenterprise.operator.reconciler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.Condition;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.QueueProgress;
import io.queueenterprise.operator.api.ReplicaStatus;
import io.queueenterprise.operator.failover.FailoverExecutor;
import io.queueenterprise.operator.failover.NodeStatusView;
import io.queueenterprise.operator.failover.ReplicaObservation;

/**
 * What the replicas report wrong with themselves reaches the QueueCluster's status (the ReplicasHealthy and
 * Quarantined conditions, each replica's problems and quarantines), from the nodes' own NodeStatus, without a cluster.
 */
@org.junit.jupiter.api.Tag("unit")
class ReplicaHealthTest {
    private static final List<String> REPLICAS = List.of("q-0", "q-1", "q-2");
    private static final FailoverExecutor.Outcome STEADY = new FailoverExecutor.Outcome("q-0", 3, true, List.of());
    private static final NodeStatusView.Transport UP = new NodeStatusView.Transport(true, null, 0, null, null);
    private static final NodeStatusView.Writer IDLE = new NodeStatusView.Writer(0, 0, null);

    private static QueueCluster cluster() {
        return StatusModelTest.cluster("1");
    }

    private static NodeStatusView node(String name, String role, NodeStatusView.Transport transport,
                                       List<NodeStatusView.PeerAddress> peers, NodeStatusView.Queue queue) {
        return new NodeStatusView(name, role, 3, "q-0", List.of(queue), null, null, transport, peers);
    }

    private static NodeStatusView.Queue live(NodeStatusView.Writer writer, NodeStatusView.Quarantines quarantines) {
        return new NodeStatusView.Queue("orders", "LIVE", 10, 10, 10, 0, List.of(), 0, 0, "", writer, quarantines);
    }

    private static List<NodeStatusView.PeerAddress> resolved(String... peers) {
        return java.util.Arrays.stream(peers).map(p -> new NodeStatusView.PeerAddress(p, p + ".q-nodes", true, null)).toList();
    }

    private static Map<String, ReplicaObservation> observe(NodeStatusView... nodes) {
        Map<String, ReplicaObservation> observations = new LinkedHashMap<>();
        for (NodeStatusView node : nodes) {
            observations.put(node.nodeId(), new ReplicaObservation.Reachable(node.nodeId(), node));
        }
        return observations;
    }

    private static Map<String, ReplicaObservation> healthy() {
        return observe(
            node("q-0", "LEADER", UP, resolved("q-1", "q-2"), live(IDLE, null)),
            node("q-1", "FOLLOWER", UP, resolved("q-0", "q-2"), live(IDLE, null)),
            node("q-2", "FOLLOWER", UP, resolved("q-0", "q-1"), live(IDLE, null)));
    }

    private static QueueClusterStatus status(Map<String, ReplicaObservation> observations) {
        return StatusModel.build(cluster(), new QueueClusterStatus(), REPLICAS, observations, STEADY, 0, Map.of(), "now");
    }

    private static Condition condition(QueueClusterStatus status, String type) {
        return status.getConditions().stream().filter(c -> c.getType().equals(type)).findFirst().orElseThrow();
    }

    @Test
    void aClusterWhoseReplicasReportNothingWrongIsHealthyAndHoldsNoQuarantine() {
        QueueClusterStatus status = status(healthy());
        Condition healthy = condition(status, Conditions.REPLICAS_HEALTHY);
        assertEquals("True", healthy.getStatus(), healthy.getMessage());
        assertEquals("NothingReported", healthy.getReason());
        assertEquals("False", condition(status, Conditions.QUARANTINED).getStatus());
        for (ReplicaStatus replica : status.getReplicas()) {
            assertNull(replica.getProblems(), replica.getName());
            assertEquals(0L, replica.getTransportRestarts(), replica.getName());
            assertNull(replica.getQueues().get(0).getQuarantines());
            assertNull(replica.getQueues().get(0).getDetail());
        }
    }

    @Test
    void eachProblemANodeReportsIsNamedAndTheMostSevereGivesTheReason() {
        NodeStatusView.Queue stalled = live(new NodeStatusView.Writer(2_500, 3, "2026-11-23T10:00:00Z"), null);
        NodeStatusView.Queue corrupted = new NodeStatusView.Queue("orders", "CORRUPTED", 10, 10, 10, 0, List.of(), 0, 0,
            "stored excerpt 0x1f does not match its CRC32C", IDLE, null);
        Map<String, ReplicaObservation> observations = observe(
            node("q-0", "LEADER", UP, resolved("q-1", "q-2"), live(IDLE, null)),
            node("q-1", "FOLLOWER", new NodeStatusView.Transport(false, "Address already in use", 4, "driver closed", "t"),
                List.of(new NodeStatusView.PeerAddress("q-0", "q-0.q-nodes", true, null),
                    new NodeStatusView.PeerAddress("q-2", "q-2.q-nodes", false, "host 'q-2.q-nodes' does not resolve (yet)")),
                stalled),
            node("q-2", "FOLLOWER", UP, resolved("q-0", "q-1"), corrupted));
        QueueClusterStatus status = status(observations);

        Condition healthy = condition(status, Conditions.REPLICAS_HEALTHY);
        assertEquals("False", healthy.getStatus());
        assertEquals("TransportDown", healthy.getReason(), "the transport being down outranks the rest");
        for (String expected : List.of("q-1: transport down: Address already in use", "q-1: orders's writer blocked in the store for 2500 ms",
            "q-1: cannot address q-2: host 'q-2.q-nodes' does not resolve (yet)",
            "q-2: orders is CORRUPTED: stored excerpt 0x1f does not match its CRC32C")) {
            assertTrue(healthy.getMessage().contains(expected), expected + " in " + healthy.getMessage());
        }
        assertEquals(List.of("transport down: Address already in use", "orders's writer blocked in the store for 2500 ms",
            "cannot address q-2: host 'q-2.q-nodes' does not resolve (yet)"), status.getReplicas().get(1).getProblems());
        assertEquals(4L, status.getReplicas().get(1).getTransportRestarts());
        assertEquals("stored excerpt 0x1f does not match its CRC32C", status.getReplicas().get(2).getQueues().get(0).getDetail());
        assertNull(status.getReplicas().get(0).getProblems());
    }

    @Test
    void withoutTheTransportProblemTheReasonIsTheNextMostSevere() {
        NodeStatusView.Queue corrupted = new NodeStatusView.Queue("orders", "DISK_FULL", 10, 10, 10, 0, List.of(), 0, 0,
            "no space left on device", IDLE, null);
        Map<String, ReplicaObservation> observations = new LinkedHashMap<>(healthy());
        observations.put("q-1", new ReplicaObservation.Reachable("q-1", node("q-1", "FOLLOWER", UP,
            List.of(new NodeStatusView.PeerAddress("q-2", "q-2.q-nodes", false, null)), corrupted)));
        Condition healthy = condition(status(observations), Conditions.REPLICAS_HEALTHY);
        assertEquals("QueueNeedsAttention", healthy.getReason());
        assertTrue(healthy.getMessage().contains("q-1: cannot address q-2: (not reported)"), healthy.getMessage());

        observations.put("q-1", new ReplicaObservation.Reachable("q-1", node("q-1", "FOLLOWER", UP, resolved("q-0", "q-2"),
            live(new NodeStatusView.Writer(999, 0, null), null))));
        assertEquals("True", condition(status(observations), Conditions.REPLICAS_HEALTHY).getStatus(),
            "a writer busy for less than a second is not a stall");
    }

    @Test
    void aQuarantineHeldOnAReplicaIsNamedWithItsReasonSizeAndFolder() {
        Map<String, ReplicaObservation> observations = new LinkedHashMap<>(healthy());
        NodeStatusView.Quarantines held = new NodeStatusView.Quarantines(2, "DIVERGENT", "2026-11-23T09:00:00Z",
            "/var/lib/queue-enterprise/orders/quarantine/20261123T090000Z", 12);
        observations.put("q-2", new ReplicaObservation.Reachable("q-2", node("q-2", "FOLLOWER", UP, resolved("q-0", "q-1"),
            live(IDLE, held))));
        QueueClusterStatus status = status(observations);
        QueueProgress orders = status.getReplicas().get(2).getQueues().get(0);
        assertEquals(2L, orders.getQuarantines());
        assertEquals("DIVERGENT at 2026-11-23T09:00:00Z, 12 excerpt(s) in /var/lib/queue-enterprise/orders/quarantine/20261123T090000Z",
            orders.getLastQuarantine());
        Condition quarantined = condition(status, Conditions.QUARANTINED);
        assertEquals("True", quarantined.getStatus());
        assertEquals("ExcerptsMovedAside", quarantined.getReason());
        assertTrue(quarantined.getMessage().startsWith("q-2 orders: 2 folder(s), newest DIVERGENT"), quarantined.getMessage());
        assertEquals("True", condition(status, Conditions.REPLICAS_HEALTHY).getStatus(),
            "a quarantine is a record to look at, not a fault of the running replica");
    }

    @Test
    void aNodeThatReportsNoneOfTheseFieldsHasNothingToSay() {
        // an older node: no transport, no peer addresses, no detail, writer or quarantines
        Map<String, ReplicaObservation> observations = observe(
            new NodeStatusView("q-0", "LEADER", 3, "q-0", List.of(new NodeStatusView.Queue("orders", "LIVE", 1, 1, 1, 0, List.of(), 0, 0)), null),
            new NodeStatusView("q-1", "FOLLOWER", 3, "q-0", List.of(), null),
            new NodeStatusView("q-2", "FOLLOWER", 3, "q-0", List.of(), null));
        QueueClusterStatus status = status(observations);
        assertEquals("True", condition(status, Conditions.REPLICAS_HEALTHY).getStatus());
        assertNull(status.getReplicas().get(0).getTransportRestarts());
    }

    @Test
    void withNoReplicaAnsweringNeitherIsKnown() {
        Map<String, ReplicaObservation> observations = new LinkedHashMap<>();
        REPLICAS.forEach(r -> observations.put(r, new ReplicaObservation.Lost(r, "pod " + r + " not found")));
        QueueClusterStatus status = StatusModel.build(cluster(), new QueueClusterStatus(), REPLICAS, observations,
            new FailoverExecutor.Outcome(null, 0, false, List.of("no majority")), 0, Map.of(), "now");
        assertEquals("Unknown", condition(status, Conditions.REPLICAS_HEALTHY).getStatus());
        assertEquals("NoReplicaAnswers", condition(status, Conditions.REPLICAS_HEALTHY).getReason());
        assertEquals("Unknown", condition(status, Conditions.QUARANTINED).getStatus());
    }

    /** The NodeStatus example docs/node-contract.md gives is what the operator reads (NodeInPodsIT reads real nodes). */
    @Test
    void theDocumentedNodeStatusReadsIntoTheOperatorsView() throws IOException {
        String contract = Files.readString(Path.of("..", "docs", "node-contract.md"), StandardCharsets.UTF_8);
        int start = contract.indexOf("```json", contract.indexOf("### NodeStatus"));
        String json = contract.substring(contract.indexOf('\n', start), contract.indexOf("```", start + 7));
        NodeStatusView view = new ObjectMapper().readValue(json, NodeStatusView.class);
        assertEquals(new NodeStatusView.Transport(true, null, 1,
            "the embedded Aeron client or driver closed (a duty-thread stall longer than 120000 ms?)", "2026-11-23T01:56:49.120Z"),
            view.transport());
        assertEquals(2, view.peerAddresses().size());
        assertEquals(false, view.peerAddresses().get(1).resolved());
        NodeStatusView.Queue orders = view.queues().get(0);
        assertEquals(new NodeStatusView.Writer(0, 1, "2026-11-23T01:58:10.004Z"), orders.writer());
        assertEquals(1, orders.quarantines().count());
        assertEquals("DAMAGED", orders.quarantines().lastReason());
        assertEquals(158, orders.quarantines().lastExcerpts());
        assertEquals(List.of("cannot address replica-2: host 'replica-2.qe.ns.svc' does not resolve (yet): ...; looked up again"
            + " with backoff (at most every 30 s)"), ReplicaHealth.problems("replica-1", view).stream().map(ReplicaHealth.Problem::message).toList());
    }
}
