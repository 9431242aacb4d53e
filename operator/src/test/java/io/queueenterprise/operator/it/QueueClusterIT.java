package io.queueenterprise.operator.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

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
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.kubernetes.testbed.KubernetesTestbed;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.QueueEnterpriseOperator;
import io.queueenterprise.operator.api.AckMode;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.NetworkMode;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.Retention;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.api.StorageSpec;
import io.queueenterprise.operator.model.ClusterNames;
import io.queueenterprise.operator.model.OperatorSettings;

/**
 * The QueueCluster CRD and the operator against the test bed's REAL kube-apiserver, scheduler and kubelet (static CPU
 * manager): every CEL rule tried with a bad resource and the API server's own message checked; the chart's example
 * accepted; a QueueCluster reconciled by the operator running in this JVM (JOSDK against the test bed's API server)
 * into its Secrets, ConfigMap, Service, StatefulSet, PDB and NetworkPolicy, with status written, and its pod, run by
 * the real kubelet, granted an exclusive core. The queue node itself is not built yet: the pod runs the node image's
 * granted-cores probe in its place (set through the operator's node arguments), so no admin endpoint answers.
 */
@KubernetesTestbed
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueueClusterIT {
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CRD_NAME = "queueclusters.queue-enterprise.io";
    private static final String STORAGE_CLASS = "qe-it-local";
    private static final String PROBE = "io.queueenterprise.kubernetes.probe.GrantedCoresReport";

    private final Testbed testbed;
    private final KubernetesClient client;
    private String namespace;
    private Path volumeDirectory;
    private String volumeName;

    QueueClusterIT(Testbed testbed) {
        this.testbed = testbed;
        this.client = testbed.client();
    }

    @BeforeAll
    void installCrd() throws IOException {
        try (InputStream crd = Files.newInputStream(Path.of(System.getProperty("qe.crd.file")))) {
            CustomResourceDefinition definition = client.apiextensions().v1().customResourceDefinitions().load(crd).item();
            client.resource(definition).forceConflicts().serverSideApply();
        }
        client.apiextensions().v1().customResourceDefinitions().withName(CRD_NAME).waitUntilCondition(crd -> crd != null
            && crd.getStatus() != null && crd.getStatus().getConditions().stream()
            .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus())), 1, TimeUnit.MINUTES);
        namespace = "queue-cluster-" + UUID.randomUUID().toString().substring(0, 8);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        client.serviceAccounts().inNamespace(namespace).withName("default").waitUntilCondition(account -> account != null, 1, TimeUnit.MINUTES);
    }

    @AfterAll
    void cleanUp() throws IOException {
        if (namespace != null) {
            clusters().inNamespace(namespace).delete();
            client.pods().inNamespace(namespace).withGracePeriod(0).delete();
            client.pods().inNamespace(namespace).informOnCondition(List::isEmpty).orTimeout(2, TimeUnit.MINUTES).join();
            client.namespaces().withName(namespace).delete();
        }
        if (volumeName != null) {
            client.persistentVolumes().withName(volumeName).delete();
        }
        client.nodes().withName(testbed.nodeName()).edit(node -> {
            node.getMetadata().getLabels().remove(ClusterNames.TUNED_NODE_LABEL);
            return node;
        });
        client.apiextensions().v1().customResourceDefinitions().withName(CRD_NAME).delete();
        if (volumeDirectory != null) {
            try (Stream<Path> files = Files.walk(volumeDirectory)) {
                for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(file);
                }
            }
        }
    }

    private MixedOperation<QueueCluster, KubernetesResourceList<QueueCluster>, Resource<QueueCluster>> clusters() {
        return client.resources(QueueCluster.class);
    }

    private static QueueCluster valid(String name) {
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
        // OpenAPI, before CEL
        assertRefused(with(spec -> spec.setReplicas(0)), "spec.replicas", "should be greater than or equal to 1");
        assertRefused(with(spec -> spec.getQueues().get(0).setName("Orders_1")), "spec.queues[0].name", "should match");
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
    void operatorCreatesTheClustersResourcesWritesStatusAndItsPodGetsAnExclusiveCore() throws Exception {
        // a tuned node: the test bed's kubelet runs the static CPU manager policy
        client.nodes().withName(testbed.nodeName()).edit(node -> {
            node.getMetadata().getLabels().put(ClusterNames.TUNED_NODE_LABEL, ClusterNames.TUNED_NODE_VALUE);
            return node;
        });
        createLocalVolume();
        OperatorSettings settings = new OperatorSettings(testbed.nodeImage(), "Never",
            // the node is not built yet: its image's granted-cores probe stands in for it
            List.of(PROBE, "--mode", "pinned", "--hold-seconds", "600", "--park-between-samples", "true"),
            "cluster.local", "queue-enterprise-system", Map.of("app.kubernetes.io/name", "queue-enterprise-operator"));
        QueueCluster solo = valid("solo");
        solo.getSpec().setReplicas(1);
        solo.getSpec().setCoresPerReplica("1");
        solo.getSpec().setMemory("512Mi");
        solo.getSpec().setSharedMemory("64Mi");
        solo.getSpec().getStorage().setStorageClassName(STORAGE_CLASS);
        try (QueueEnterpriseOperator operator = new QueueEnterpriseOperator(client, settings, Set.of(namespace), null,
            new PrometheusRegistry())) {
            operator.start();
            QueueCluster created = clusters().inNamespace(namespace).resource(solo).create();

            QueueCluster reconciled = clusters().inNamespace(namespace).withName("solo").waitUntilCondition(cluster ->
                cluster != null && cluster.getStatus() != null && cluster.getStatus().getObservedGeneration() != null,
                3, TimeUnit.MINUTES);
            assertEquals(created.getMetadata().getGeneration(), reconciled.getStatus().getObservedGeneration());
            Map<String, String> conditions = new java.util.TreeMap<>();
            reconciled.getStatus().getConditions().forEach(c -> conditions.put(c.getType(), c.getStatus() + " " + c.getReason()));
            assertEquals("False NoQuorum", conditions.get("Quorum"), "no admin endpoint answers (the probe stands in for the node): " + conditions);
            assertEquals("False", conditions.get("Ready").split(" ")[0], conditions.toString());
            assertEquals(Set.of("Quorum", "Ready", "Pinned", "Failover"), conditions.keySet());

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

            // the real scheduler and kubelet run the pod: Guaranteed, and the static CPU manager grants it a core
            Pod pod = client.pods().inNamespace(namespace).withName("solo-0").waitUntilCondition(p -> p != null && p.getStatus() != null
                && failIfFailed(p) && "Running".equals(p.getStatus().getPhase()), 5, TimeUnit.MINUTES);
            assertEquals("Guaranteed", pod.getStatus().getQosClass());
            assertEquals(new Quantity("1"), pod.getSpec().getContainers().get(0).getResources().getLimits().get("cpu"));
            JsonNode report = grantedCores("solo-0");
            assertEquals(1, report.get("processCpusAllowed").asText().split(",").length, report.toString());
            assertTrue(!report.get("processCpusAllowed").asText().contains("-") && !report.get("processCpusAllowed").asText().equals("0"),
                "one exclusive core, never the reserved core 0: " + report);
            assertEquals(List.of(Integer.parseInt(report.get("processCpusAllowed").asText())),
                testbed.podResources().container(namespace, "solo-0", "node").orElseThrow().cpuIds(), "the kubelet's own record");
        }
    }

    private static void assertOwned(List<OwnerReference> owners, String uid) {
        assertTrue(owners.stream().anyMatch(owner -> uid.equals(owner.getUid()) && "QueueCluster".equals(owner.getKind())),
            "owned by the QueueCluster: " + owners);
    }

    private boolean failIfFailed(Pod pod) {
        if ("Failed".equals(pod.getStatus().getPhase())) {
            throw new AssertionError("pod failed: " + pod.getStatus() + "\n" + client.pods().inNamespace(namespace)
                .withName(pod.getMetadata().getName()).getLog());
        }
        return true;
    }

    private JsonNode grantedCores(String pod) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (System.nanoTime() < deadline) {
            for (String line : client.pods().inNamespace(namespace).withName(pod).getLog().split("\n")) {
                if (line.startsWith("GRANTED_CORES ")) {
                    return JSON.readTree(line.substring("GRANTED_CORES ".length()));
                }
            }
            Thread.sleep(500);
        }
        throw new AssertionError("pod " + pod + " printed no GRANTED_CORES report: "
            + client.pods().inNamespace(namespace).withName(pod).getLog());
    }

    /** The test bed has no volume provisioner: one local PersistentVolume for the replica's claim. */
    private void createLocalVolume() throws IOException {
        Path workDirectory = Path.of(System.getProperty("qe.kubernetes.work-dir", "target/kubernetes-testbed"));
        Files.createDirectories(workDirectory);
        volumeDirectory = Files.createTempDirectory(workDirectory.toAbsolutePath(), "local-pv-");
        volumeName = "qe-it-" + UUID.randomUUID().toString().substring(0, 8);
        client.persistentVolumes().resource(new PersistentVolumeBuilder()
            .withNewMetadata().withName(volumeName).endMetadata()
            .withNewSpec()
                .withCapacity(Map.of("storage", new Quantity("1Gi")))
                .withAccessModes("ReadWriteOnce")
                .withStorageClassName(STORAGE_CLASS)
                .withPersistentVolumeReclaimPolicy("Retain")
                .withNewLocal().withPath(volumeDirectory.toString()).endLocal()
                .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression()
                    .withKey("kubernetes.io/hostname").withOperator("In").withValues(testbed.nodeName())
                .endMatchExpression().endNodeSelectorTerm().endRequired().endNodeAffinity()
            .endSpec().build()).create();
    }
}
