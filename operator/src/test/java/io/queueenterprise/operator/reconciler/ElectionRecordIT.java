package io.queueenterprise.operator.reconciler;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.kubernetes.testbed.KubernetesTestbed;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.failover.Plan;
import io.queueenterprise.operator.it.TestbedFixtures;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The reconcile that records an election (the term written at once, {@link StatusElectionRecorder}) then writes its
 * own status patch the way the Java Operator SDK does (server-side apply, carrying the resource's version): on the
 * test bed's REAL API server, that patch is taken. Before the recorder handed the term write's version back to the
 * reconcile, the API server refused it (409, the object has been modified) after every election.
 */
@KubernetesTestbed
@Tag("kubernetes")
class ElectionRecordIT {
    private final KubernetesClient client;

    ElectionRecordIT(Testbed testbed) {
        this.client = testbed.client();
    }

    @Test
    void theReconcilesStatusPatchAfterAnElectionIsTaken() throws Exception {
        String namespace = "election-record-" + UUID.randomUUID().toString().substring(0, 8);
        TestbedFixtures.installCrd(client);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        try {
            client.resources(QueueCluster.class).inNamespace(namespace).resource(cluster()).create();
            // what a reconcile starts from: the resource as read, with its version
            QueueCluster reconciled = client.resources(QueueCluster.class).inNamespace(namespace).withName("elected").get();
            new StatusElectionRecorder(client, reconciled, new OperatorMetrics(new PrometheusRegistry()), Instant.now().toString(), false)
                .recordTerm(new Plan.Elect("elected-1", 2, "elected-0", List.of("elected-2"), true, "the leader is lost"));
            QueueClusterStatus status = reconciled.getStatus();
            status.setLeader("elected-1");
            reconciled.setStatus(status);
            reconciled.getMetadata().setManagedFields(null); // as the SDK sends an apply patch
            client.resources(QueueCluster.class).inNamespace(namespace).resource(reconciled).subresource("status")
                .patch(new PatchContext.Builder().withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager("queuecluster")
                    .withForce(true).build());
            QueueCluster stored = client.resources(QueueCluster.class).inNamespace(namespace).withName("elected").get();
            assertEquals(2L, stored.getStatus().getTerm());
            assertEquals("elected-1", stored.getStatus().getLeader(), "the reconcile's own status patch was taken");
        } finally {
            TestbedFixtures.deleteNamespace(client, namespace);
            TestbedFixtures.removeCrd(client);
        }
    }

    private static QueueCluster cluster() {
        QueueDefinition queue = new QueueDefinition();
        queue.setName("orders");
        queue.setRollCycle(RollCycle.FAST_DAILY);
        queue.setEncryption(Encryption.NONE);
        QueueClusterSpec spec = new QueueClusterSpec();
        spec.setQueues(new java.util.ArrayList<>(List.of(queue)));
        spec.setReplicas(3);
        spec.setMemory("1Gi");
        io.queueenterprise.operator.api.StorageSpec storage = new io.queueenterprise.operator.api.StorageSpec();
        storage.setSize("1Gi");
        spec.setStorage(storage);
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName("elected").build());
        cluster.setSpec(spec);
        return cluster;
    }
}
