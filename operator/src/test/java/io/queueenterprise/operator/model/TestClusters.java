package io.queueenterprise.operator.model;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.queueenterprise.operator.api.AckMode;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.IdleStrategy;
import io.queueenterprise.operator.api.NodePool;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.Retention;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.api.StorageSpec;

/** QueueClusters built in code for the model tests. */
final class TestClusters {
    private TestClusters() {
    }

    /**
     * The QueueCluster whose replica 0 is examples/node-config/three-replicas-replica-0.yaml: named "replica" so
     * that its pods (node ids) are replica-0..2, as in the example.
     */
    static QueueCluster threeReplicas() {
        QueueDefinition orders = queue("orders", RollCycle.FAST_HOURLY, Encryption.AES_128_CTR_POLY1305);
        orders.setDataKeySecret("orders-key");
        orders.setAckMode(AckMode.QUORUM);
        orders.setAckTimeout("1s");
        Retention retention = new Retention();
        retention.setMaxAge("24h");
        retention.setMaxBytes("10Gi");
        orders.setRetention(retention);
        QueueDefinition telemetry = queue("telemetry", RollCycle.FAST_DAILY, Encryption.AES_128_CTR);
        telemetry.setDataKeySecret("telemetry-key");
        QueueClusterSpec spec = spec(3, List.of(orders, telemetry));
        spec.setAckMode(AckMode.ASYNC);
        spec.setIdleStrategy(IdleStrategy.BACKOFF);
        spec.setCoresPerReplica("2");
        NodePool pool = new NodePool();
        pool.setNodeSelector(Map.of("queue-enterprise.io/pool", "tuned"));
        pool.setTolerations(List.of(new TolerationBuilder().withKey("queue-enterprise.io/dedicated").withOperator("Exists")
            .withEffect("NoSchedule").build()));
        spec.setNodePool(pool);
        spec.setClientCredentialSecret("trading-client-credential"); // the example serves remote clients
        spec.setWriteKeySecret("trading-write-keys");                  // and takes their appends
        return cluster("replica", "trading", spec);
    }

    /** The QueueCluster closest to examples/node-config/single-node.yaml. */
    static QueueCluster singleNode() {
        return cluster("solo", "default", spec(1, List.of(queue("events", RollCycle.FAST_DAILY, Encryption.NONE))));
    }

    static QueueDefinition queue(String name, RollCycle rollCycle, Encryption encryption) {
        QueueDefinition queue = new QueueDefinition();
        queue.setName(name);
        queue.setRollCycle(rollCycle);
        queue.setEncryption(encryption);
        return queue;
    }

    static QueueClusterSpec spec(int replicas, List<QueueDefinition> queues) {
        QueueClusterSpec spec = new QueueClusterSpec();
        spec.setReplicas(replicas);
        spec.setQueues(queues);
        spec.setMemory("2Gi");
        StorageSpec storage = new StorageSpec();
        storage.setSize("20Gi");
        spec.setStorage(storage);
        return spec;
    }

    static QueueCluster cluster(String name, String namespace, QueueClusterSpec spec) {
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).withGeneration(1L).build());
        cluster.setSpec(spec);
        return cluster;
    }
}
