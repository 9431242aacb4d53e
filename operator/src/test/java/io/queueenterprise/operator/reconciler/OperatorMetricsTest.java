package io.queueenterprise.operator.reconciler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.QueueProgress;
import io.queueenterprise.operator.api.ReplicaStatus;

/** Series live as long as what they describe: replicas scaled away and deleted clusters leave nothing behind. */
@org.junit.jupiter.api.Tag("unit")
class OperatorMetricsTest {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final OperatorMetrics metrics = new OperatorMetrics(registry);

    @Test
    void aReplicaScaledAwayLosesItsSeriesAtTheNextPublish() throws IOException {
        QueueCluster orders = cluster("trading", "orders", "uid-1");
        metrics.publish(orders, status(3));
        assertTrue(scrape().contains("replica=\"orders-2\""), scrape());

        metrics.publish(orders, status(2));

        String after = scrape();
        assertFalse(after.contains("replica=\"orders-2\""), after);
        assertTrue(after.contains("queue_enterprise_replica_lag_excerpts{cluster=\"orders\",namespace=\"trading\",queue=\"q\",replica=\"orders-1\"}"), after);
    }

    @Test
    void aDeletedClusterLosesEverySeriesAndAReconcileStillInFlightDoesNotBringThemBack() throws IOException {
        QueueCluster orders = cluster("trading", "orders", "uid-1");
        QueueCluster quotes = cluster("trading", "quotes", "uid-2");
        metrics.publish(orders, status(3));
        metrics.reconciled(orders, "Steady");
        metrics.failover(orders);
        metrics.publish(quotes, status(1));

        metrics.forget("trading", "orders", "uid-1");
        metrics.publish(orders, status(3));   // a reconcile that started before the deletion, finishing after it
        metrics.reconciled(orders, "Steady");

        String after = scrape();
        assertFalse(after.contains("cluster=\"orders\""), after);
        assertTrue(after.contains("cluster=\"quotes\""), "another cluster's series stay: " + after);

        QueueCluster recreated = cluster("trading", "orders", "uid-3");
        metrics.publish(recreated, status(1));
        assertTrue(scrape().contains("queue_enterprise_cluster_term{cluster=\"orders\",namespace=\"trading\"} 7.0"), scrape());
    }

    @Test
    void aClusterOfTheSameNameInAnotherNamespaceIsNotForgotten() throws IOException {
        metrics.publish(cluster("a", "orders", "uid-a"), status(1));
        metrics.publish(cluster("b", "orders", "uid-b"), status(1));

        metrics.forget("a", "orders", "uid-a");

        String after = scrape();
        assertFalse(after.contains("namespace=\"a\""), after);
        assertEquals(2, after.lines().filter(line -> line.contains("namespace=\"b\"") && line.startsWith("queue_enterprise_replica_")).count(), after);
    }

    private String scrape() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new PrometheusTextFormatWriter(false).write(out, registry.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }

    private static QueueCluster cluster(String namespace, String name, String uid) {
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withNamespace(namespace).withName(name).withUid(uid).build());
        return cluster;
    }

    private static QueueClusterStatus status(int replicas) {
        QueueClusterStatus status = new QueueClusterStatus();
        status.setTerm(7L);
        status.setConditions(List.of(new ConditionBuilder().withType("Ready").withStatus("True").withReason("LeaderAndQuorum").build()));
        List<ReplicaStatus> list = new ArrayList<>();
        for (int ordinal = 0; ordinal < replicas; ordinal++) {
            ReplicaStatus replica = new ReplicaStatus();
            replica.setName("orders-" + ordinal);
            replica.setQueues(List.of(new QueueProgress("q", "LIVE", 100L, 0L)));
            list.add(replica);
        }
        status.setReplicas(list);
        return status;
    }
}
