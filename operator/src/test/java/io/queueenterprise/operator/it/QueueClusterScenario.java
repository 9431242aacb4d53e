package io.queueenterprise.operator.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.operator.QueueEnterpriseOperator;
import io.queueenterprise.operator.api.AckMode;
import io.queueenterprise.operator.api.ClientIdentity;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.NetworkMode;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.Retention;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.api.StorageSpec;
import io.queueenterprise.operator.model.OperatorSettings;

/**
 * The scenario every real API server runs (the test bed's in {@link QueueClusterIT}, K3s's in
 * {@link K3sQueueClusterIT}): the CRD installed; every CEL rule tried with a bad resource and the API server's own
 * message checked; the chart's example accepted; a QueueCluster reconciled by the operator running in this JVM (JOSDK
 * against that API server) into its Secrets, ConfigMap, Service, StatefulSet, PDB and NetworkPolicy, owned by it,
 * with status written; at that first reconcile no node answers yet (its pod is only being created), so Quorum is False.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@org.junit.jupiter.api.Tag("kubernetes")
@org.junit.jupiter.api.Tag("slow")
abstract class QueueClusterScenario {
    protected static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    protected final KubernetesClient client;
    protected String namespace;

    protected QueueClusterScenario(KubernetesClient client) {
        this.client = client;
    }

    /** The operator's settings for this API server (which image the node pods run, with which arguments). */
    protected abstract OperatorSettings settings();

    /** Adjusts the single-replica cluster the operator test creates (storage class, ...) and prepares the cluster for it. */
    protected void prepare(QueueCluster solo) throws Exception {
    }

    /** More checks once the operator has created everything and written status. */
    protected void afterReconciled(QueueCluster created) throws Exception {
    }

    /** Removes what {@link #prepare} added. */
    protected void cleanUpPrepared() throws IOException {
    }

    @BeforeAll
    void installCrd() throws IOException {
        TestbedFixtures.installCrd(client);
        namespace = "queue-cluster-" + UUID.randomUUID().toString().substring(0, 8);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        client.serviceAccounts().inNamespace(namespace).withName("default").waitUntilCondition(account -> account != null, 1, TimeUnit.MINUTES);
    }

    @AfterAll
    void cleanUp() throws IOException {
        if (namespace != null) {
            clusters().inNamespace(namespace).delete(); // a subclass's resource type (K3s runs the same scenario)
            TestbedFixtures.deleteNamespace(client, namespace);
        }
        cleanUpPrepared();
        TestbedFixtures.removeCrd(client);
        afterCleanUp();
    }

    /** Last of all (a container to stop): JUnit runs a subclass's own @AfterAll before this class's. */
    protected void afterCleanUp() {
    }

    protected MixedOperation<QueueCluster, KubernetesResourceList<QueueCluster>, Resource<QueueCluster>> clusters() {
        return client.resources(QueueCluster.class);
    }

    protected static QueueCluster valid(String name) {
        QueueDefinition orders = new QueueDefinition();
        orders.setName("orders");
        orders.setRollCycle(RollCycle.FAST_HOURLY);
        orders.setEncryption(Encryption.AES_128_CTR_POLY1305);
        orders.setDataKeySecret("orders-key");
        QueueDefinition telemetry = new QueueDefinition();
        telemetry.setName("telemetry");
        telemetry.setRollCycle(RollCycle.FAST_DAILY);
        telemetry.setEncryption(Encryption.NONE);
        QueueClusterSpec spec = new QueueClusterSpec();
        spec.setQueues(new java.util.ArrayList<>(List.of(orders, telemetry)));
        spec.setReplicas(3);
        spec.setAckMode(AckMode.QUORUM);
        spec.setMemory("1Gi");
        StorageSpec storage = new StorageSpec();
        storage.setSize("1Gi");
        spec.setStorage(storage);
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName(name).build());
        cluster.setSpec(spec);
        return cluster;
    }

    protected static io.queueenterprise.operator.api.CalibrationRequest calibration(int timeLimit, int duration, int warmup) {
        io.queueenterprise.operator.api.CalibrationRequest request = new io.queueenterprise.operator.api.CalibrationRequest();
        request.setRequest("first");
        request.setTimeLimitSeconds(timeLimit);
        request.setDurationSeconds(duration);
        request.setWarmupSeconds(warmup);
        return request;
    }

    /** Creating {@code cluster} fails with 422 and the API server's message names the field and says the rule's text. */
    private void assertRefused(QueueCluster cluster, String field, String message) {
        KubernetesClientException refused = assertThrows(KubernetesClientException.class,
            () -> clusters().inNamespace(namespace).resource(cluster).create(), "accepted, expected refusal: " + message);
        assertEquals(422, refused.getCode(), refused.getMessage());
        assertTrue(refused.getMessage().contains(field) && refused.getMessage().contains(message),
            "expected '" + field + "' and '" + message + "' in: " + refused.getMessage());
    }

    private QueueCluster with(Consumer<QueueClusterSpec> change) {
        QueueCluster cluster = valid("bad-" + UUID.randomUUID().toString().substring(0, 6));
        change.accept(cluster.getSpec());
        return cluster;
    }

    @Test
    void apiServerRefusesEveryRuleBreakingClusterWithTheRulesMessage() {
        assertRefused(with(spec -> spec.getQueues().get(1).setName("orders")), "spec.queues", "queue names must be unique");
        assertRefused(with(spec -> spec.setReplicas(2)), "spec.replicas", "replicas must be odd when ackMode is QUORUM");
        assertRefused(with(spec -> {
            spec.setAckMode(AckMode.ASYNC);
            spec.setReplicas(4);
            spec.getQueues().get(0).setAckMode(AckMode.QUORUM);
        }), "spec.replicas", "replicas must be odd when ackMode is QUORUM");
        assertRefused(with(spec -> spec.setCoresPerReplica("1500m")), "spec.coresPerReplica", "must be a whole number of cores");
        assertRefused(with(spec -> spec.getQueues().get(0).setDataKeySecret(null)), "dataKeySecret", "an encrypted queue needs dataKeySecret");
        assertRefused(with(spec -> spec.getQueues().get(1).setRetention(new Retention())), "retention", "retention needs maxAge or maxBytes");
        assertRefused(with(spec -> {
            spec.setPinned(false);
            spec.setCalibration(calibration(30, 1, 2));
        }), "spec.calibration", "calibration requires pinned: true");
        assertRefused(with(spec -> spec.setWriteKeySecret("write-keys")), "spec.writeKeySecret",
            "writeKeySecret requires clientCredentialSecret");
        assertRefused(with(spec -> spec.setClients(List.of(new ClientIdentity("billing")))), "spec.clients",
            "clients requires clientCredentialSecret");
        assertRefused(with(spec -> {
            spec.setClientCredentialSecret("clients");
            spec.setClients(List.of(new ClientIdentity("billing"), new ClientIdentity("risk"), new ClientIdentity("billing")));
        }), "spec.clients", "client names must be unique within a QueueCluster");
        assertRefused(with(spec -> spec.setCalibration(calibration(10, 5, 6))), "spec.calibration.timeLimitSeconds",
            "must leave room for one warm-up and one recorded run");
        assertRefused(with(spec -> {
            io.queueenterprise.operator.api.CalibrationRequest neither = calibration(30, 1, 2);
            neither.setRequest(null);   // atFirstStart defaults to false: nothing asked
            spec.setCalibration(neither);
        }), "spec.calibration", "calibration needs a request token");
        assertRefused(with(spec -> {
            spec.setMemory("256Mi");
            spec.setSharedMemory("4Gi");
        }), "spec.sharedMemory", "sharedMemory must be at most half of memory");
        assertRefused(with(spec -> {
            spec.setMemory("1Gi");
            spec.setSharedMemory("768Mi");
        }), "spec.sharedMemory", "sharedMemory must be at most half of memory");
        // OpenAPI, before CEL
        assertRefused(with(spec -> spec.setReplicas(0)), "spec.replicas", "should be greater than or equal to 1");
        assertRefused(with(spec -> spec.getQueues().get(0).setName("Orders_1")), "spec.queues[0].name", "should match");
    }

    @Test
    void sharedMemoryMayTakeHalfOfMemoryInAnyUnit() {
        assertNotNull(clusters().inNamespace(namespace).resource(with(spec -> {
            spec.setMemory("1Gi");
            spec.setSharedMemory("512Mi");
        })).dryRun().create());
        assertNotNull(clusters().inNamespace(namespace).resource(with(spec -> {
            spec.setMemory("2G");            // 2,000,000,000 bytes
            spec.setSharedMemory("953Mi");   // 999,292,928 bytes
        })).dryRun().create());
    }

    @Test
    void unpinnedClustersMayUseFractionsAndAsyncClustersEvenReplicas() {
        QueueCluster fractional = with(spec -> {
            spec.setPinned(false);
            spec.setCoresPerReplica("1500m");
            spec.setAckMode(AckMode.ASYNC);
            spec.setReplicas(2);
        });
        assertNotNull(clusters().inNamespace(namespace).resource(fractional).dryRun().create());
    }

    @Test
    void immutableFieldsCannotChange() {
        QueueCluster created = clusters().inNamespace(namespace).resource(valid("immutable")).create();
        try {
            assertUpdateRefused(created, spec -> spec.setNetworkMode(NetworkMode.HOST), "networkMode is immutable");
            assertUpdateRefused(created, spec -> spec.getStorage().setSize("2Gi"), "storage is immutable");
            assertUpdateRefused(created, spec -> spec.getQueues().get(0).setEncryption(Encryption.AES_128_CTR),
                "a queue's encryption and rollCycle are immutable");
            assertUpdateRefused(created, spec -> spec.getQueues().get(1).setRollCycle(RollCycle.FAST_HOURLY),
                "a queue's encryption and rollCycle are immutable");
            // what may change does: more replicas, a new queue
            clusters().inNamespace(namespace).withName("immutable").edit(cluster -> {
                cluster.getSpec().setReplicas(5);
                QueueDefinition audit = new QueueDefinition();
                audit.setName("audit");
                audit.setRollCycle(RollCycle.FAST_DAILY);
                audit.setEncryption(Encryption.NONE);
                cluster.getSpec().getQueues().add(audit);
                return cluster;
            });
        } finally {
            clusters().inNamespace(namespace).withName("immutable").delete();
        }
    }

    private void assertUpdateRefused(QueueCluster created, Consumer<QueueClusterSpec> change, String message) {
        KubernetesClientException refused = assertThrows(KubernetesClientException.class,
            () -> clusters().inNamespace(namespace).withName(created.getMetadata().getName()).edit(cluster -> {
                change.accept(cluster.getSpec());
                return cluster;
            }), "update accepted, expected: " + message);
        assertEquals(422, refused.getCode(), refused.getMessage());
        assertTrue(refused.getMessage().contains(message), "expected '" + message + "' in: " + refused.getMessage());
    }

    @Test
    void theChartsExampleIsAccepted() throws IOException {
        Path example = Path.of(System.getProperty("qe.helm.chart.dir"), "examples", "queuecluster.yaml");
        QueueCluster cluster = YAML.readValue(example.toFile(), QueueCluster.class);
        assertNotNull(clusters().inNamespace(namespace).resource(cluster).dryRun().create());
    }

    @Test
    void operatorCreatesTheClustersResourcesAndWritesStatus() throws Exception {
        QueueCluster solo = valid("solo");
        solo.getSpec().setReplicas(1);
        solo.getSpec().setCoresPerReplica("1");
        solo.getSpec().setMemory("512Mi");
        solo.getSpec().setSharedMemory("64Mi");
        prepare(solo);
        PrometheusRegistry registry = new PrometheusRegistry();
        try (QueueEnterpriseOperator operator = new QueueEnterpriseOperator(client, settings(), Set.of(namespace), null,
            registry)) {
            operator.start();
            QueueCluster created = clusters().inNamespace(namespace).resource(solo).create();

            QueueCluster reconciled = clusters().inNamespace(namespace).withName("solo").waitUntilCondition(cluster ->
                cluster != null && cluster.getStatus() != null && cluster.getStatus().getObservedGeneration() != null,
                3, TimeUnit.MINUTES);
            assertEquals(created.getMetadata().getGeneration(), reconciled.getStatus().getObservedGeneration());
            Map<String, String> conditions = new java.util.TreeMap<>();
            reconciled.getStatus().getConditions().forEach(c -> conditions.put(c.getType(), c.getStatus() + " " + c.getReason()));
            assertEquals("False NoQuorum", conditions.get("Quorum"), "the first reconcile: the node's pod is only being created: " + conditions);
            assertEquals("False", conditions.get("Ready").split(" ")[0], conditions.toString());
            assertEquals(Set.of("Quorum", "Ready", "Pinned", "Failover", "ReplicasHealthy", "Quarantined", "Calibrated",
                "NodeIdentityMismatch"), conditions.keySet());
            // no replica has reported a key yet: nothing pinned, nothing mismatched
            assertEquals("False NotAllPinned", conditions.get("NodeIdentityMismatch"), conditions.toString());
            assertEquals("Unknown NoReplicaAnswers", conditions.get("ReplicasHealthy"), conditions.toString());
            assertEquals("Unknown NoReplicaAnswers", conditions.get("Quarantined"), conditions.toString());
            assertEquals("False NotRequested", conditions.get("Calibrated"), conditions.toString());

            String uid = created.getMetadata().getUid();
            assertOwned(client.secrets().inNamespace(namespace).withName("solo-admin-token").get().getMetadata().getOwnerReferences(), uid);
            assertOwned(client.secrets().inNamespace(namespace).withName("solo-peer-credential").get().getMetadata().getOwnerReferences(), uid);
            assertOwned(client.services().inNamespace(namespace).withName("solo-nodes").get().getMetadata().getOwnerReferences(), uid);
            assertOwned(client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName("solo").get().getMetadata().getOwnerReferences(), uid);
            assertOwned(client.network().v1().networkPolicies().inNamespace(namespace).withName("solo").get().getMetadata().getOwnerReferences(), uid);
            var config = client.configMaps().inNamespace(namespace).withName("solo-config").get();
            assertOwned(config.getMetadata().getOwnerReferences(), uid);
            JsonNode document = YAML.readTree(config.getData().get("solo-0.yaml"));
            assertEquals("solo-0", document.get("nodeId").asText());
            assertEquals("solo-0.solo-nodes." + namespace + ".svc.cluster.local", document.at("/peers/0/host").asText());
            StatefulSet set = client.apps().statefulSets().inNamespace(namespace).withName("solo").get();
            assertOwned(set.getMetadata().getOwnerReferences(), uid);
            afterReconciled(created);

            assertTrue(seriesOf(registry, namespace, "solo") > 0, "the reconciled cluster's series are exported");
            clusters().inNamespace(namespace).withName("solo").delete();
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
            while (seriesOf(registry, namespace, "solo") > 0 && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            assertEquals(0, seriesOf(registry, namespace, "solo"), "a deleted QueueCluster's metric series are removed");
        }
    }

    /** Data points in the registry labelled with this cluster. */
    private static long seriesOf(PrometheusRegistry registry, String namespace, String cluster) {
        return registry.scrape().stream().flatMap(snapshot -> snapshot.getDataPoints().stream())
            .filter(point -> namespace.equals(point.getLabels().get("namespace")) && cluster.equals(point.getLabels().get("cluster")))
            .count();
    }

    private static void assertOwned(List<OwnerReference> owners, String uid) {
        assertTrue(owners.stream().anyMatch(owner -> uid.equals(owner.getUid()) && "QueueCluster".equals(owner.getKind())),
            "owned by the QueueCluster: " + owners);
    }
}
