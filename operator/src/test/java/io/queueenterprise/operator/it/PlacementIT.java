package io.queueenterprise.operator.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.queueenterprise.kubernetes.testbed.KubernetesTestbed;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.api.AckMode;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.NetworkMode;
import io.queueenterprise.operator.api.NodePool;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.api.StorageSpec;
import io.queueenterprise.operator.model.ClusterNames;
import io.queueenterprise.operator.model.OperatorSettings;
import io.queueenterprise.operator.model.QueueClusterModel;

/**
 * Where the real kube-scheduler puts the StatefulSet the model layer writes, on many nodes: kwok fake nodes (kwok
 * runs as a process of this test, against the test bed's API server on loopback; fake nodes run nothing and nothing
 * connects to their pods). Three tuned nodes and two untuned nodes of the same pool: pinned host-network replicas
 * land one per tuned node and never on an untuned one; a replica more than there are tuned nodes stays Pending.
 */
@KubernetesTestbed
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@org.junit.jupiter.api.Tag("kubernetes")
class PlacementIT {
    private static final String POOL = "kwok-tuned";
    private static final String FAKE = "kwok.x-k8s.io/node";
    private static final String STORAGE_CLASS = "qe-it-kwok-local";
    private static final List<String> TUNED = List.of("kwok-tuned-a", "kwok-tuned-b", "kwok-tuned-c");
    private static final List<String> UNTUNED = List.of("kwok-plain-a", "kwok-plain-b");

    private final Testbed testbed;
    private final KubernetesClient client;
    private final List<String> volumes = new ArrayList<>();
    private Process kwok;
    private Path kwokLog;
    private String namespace;

    PlacementIT(Testbed testbed) {
        this.testbed = testbed;
        this.client = testbed.client();
    }

    @BeforeAll
    void startKwokAndFakeNodes() throws IOException, InterruptedException {
        Path workDirectory = Path.of(System.getProperty("qe.kubernetes.work-dir", "target/kubernetes-testbed")).toAbsolutePath();
        Files.createDirectories(workDirectory);
        kwokLog = workDirectory.resolve("kwok.log");
        // no configuration of ours: kwok's built-in stages (nodes turn Ready, pods Running)
        Files.writeString(workDirectory.resolve("kwok-empty.yaml"), "", StandardCharsets.UTF_8);
        kwok = new ProcessBuilder(kwokBinary().toString(), "--kubeconfig", testbed.kubeconfig().toString(),
            "--manage-nodes-with-annotation-selector", FAKE + "=fake", "--node-lease-duration-seconds", "40",
            "--server-address", "127.0.0.1:0", "--config", workDirectory.resolve("kwok-empty.yaml").toString())
            .redirectErrorStream(true).redirectOutput(kwokLog.toFile()).start();
        for (String name : TUNED) {
            fakeNode(name, true);
        }
        for (String name : UNTUNED) {
            fakeNode(name, false);
        }
        for (String name : concat(TUNED, UNTUNED)) {
            client.nodes().withName(name).waitUntilCondition(node -> node != null && node.getStatus() != null
                && node.getStatus().getConditions() != null && node.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus())),
                2, TimeUnit.MINUTES);
        }
        client.storage().v1().storageClasses().resource(new StorageClassBuilder().withNewMetadata().withName(STORAGE_CLASS).endMetadata()
            .withProvisioner("kubernetes.io/no-provisioner").withVolumeBindingMode("WaitForFirstConsumer").build()).create();
        // one claimable volume per node of the pool (tuned-a gets two): storage never decides where a replica goes
        for (String name : concat(TUNED, UNTUNED, List.of(TUNED.get(0)))) {
            volumes.add(localVolume(name));
        }
        namespace = "placement-" + UUID.randomUUID().toString().substring(0, 8);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        client.serviceAccounts().inNamespace(namespace).withName("default").waitUntilCondition(account -> account != null, 1, TimeUnit.MINUTES);
    }

    @AfterAll
    void stopKwokAndRemoveEverything() throws InterruptedException {
        if (namespace != null) {
            client.apps().statefulSets().inNamespace(namespace).delete();
            client.pods().inNamespace(namespace).withGracePeriod(0).delete();
            client.namespaces().withName(namespace).delete();
        }
        for (String name : concat(TUNED, UNTUNED)) {
            client.nodes().withName(name).delete();
        }
        for (String name : concat(TUNED, UNTUNED)) {
            // gone before another test class counts the tuned nodes
            client.nodes().withName(name).waitUntilCondition(java.util.Objects::isNull, 1, TimeUnit.MINUTES);
        }
        volumes.forEach(volume -> client.persistentVolumes().withName(volume).delete());
        client.storage().v1().storageClasses().withName(STORAGE_CLASS).delete();
        if (kwok != null) {
            kwok.destroy();
            if (!kwok.waitFor(10, TimeUnit.SECONDS)) {
                kwok.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void pinnedHostNetworkReplicasLandOnePerTunedNodeAndNeverOnAnUntunedOne() throws IOException {
        QueueCluster cluster = cluster("spread", 3);
        apply(cluster);
        List<Pod> pods = waitForBoundPods("spread", 3);
        Set<String> nodes = pods.stream().map(pod -> pod.getSpec().getNodeName()).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(new TreeSet<>(TUNED), nodes, "one replica on each tuned node: " + describe(pods));

        // a fourth replica: the tuned nodes are taken (anti-affinity), the untuned ones are not eligible
        cluster.getSpec().setReplicas(4);
        apply(cluster);
        Pod fourth = client.pods().inNamespace(namespace).withName("spread-3").waitUntilCondition(pod -> pod != null
            && pod.getStatus() != null && pod.getStatus().getConditions() != null && pod.getStatus().getConditions().stream()
            .anyMatch(c -> "PodScheduled".equals(c.getType()) && "False".equals(c.getStatus()) && "Unschedulable".equals(c.getReason())),
            2, TimeUnit.MINUTES);
        assertEquals(null, fourth.getSpec().getNodeName());
        String why = fourth.getStatus().getConditions().stream().filter(c -> "PodScheduled".equals(c.getType())).findFirst().orElseThrow().getMessage();
        // the untuned nodes and the test bed's own node fail the selector; the tuned ones are taken (host-network
        // replicas claim their ports on the node, which the scheduler checks before the anti-affinity)
        assertTrue(why.contains("3 node(s) didn't match Pod's node affinity/selector")
            && (why.contains("3 node(s) didn't have free ports") || why.contains("3 node(s) didn't match pod anti-affinity rules")),
            "the scheduler's own reasons: " + why);
    }

    private QueueCluster cluster(String name, int replicas) {
        QueueDefinition queue = new QueueDefinition();
        queue.setName("orders");
        queue.setRollCycle(RollCycle.FAST_HOURLY);
        queue.setEncryption(Encryption.NONE);
        QueueClusterSpec spec = new QueueClusterSpec();
        spec.setQueues(List.of(queue));
        spec.setReplicas(replicas);
        spec.setAckMode(AckMode.ASYNC);
        spec.setCoresPerReplica("2");
        spec.setMemory("2Gi");
        spec.setNetworkMode(NetworkMode.HOST);
        StorageSpec storage = new StorageSpec();
        storage.setSize("1Gi");
        storage.setStorageClassName(STORAGE_CLASS);
        spec.setStorage(storage);
        NodePool pool = new NodePool();
        pool.setNodeSelector(Map.of("queue-enterprise.io/pool", POOL));
        pool.setTolerations(List.of(
            new TolerationBuilder().withKey("queue-enterprise.io/dedicated").withOperator("Exists").withEffect("NoSchedule").build(),
            new TolerationBuilder().withKey(FAKE).withOperator("Exists").withEffect("NoSchedule").build()));
        spec.setNodePool(pool);
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
        cluster.setSpec(spec);
        return cluster;
    }

    /** What the operator's dependents apply, without the operator: placement is the manifests' and the scheduler's. */
    private void apply(QueueCluster cluster) {
        QueueClusterModel model = new QueueClusterModel(cluster, OperatorSettings.defaults());
        client.resource(model.headlessService()).forceConflicts().serverSideApply();
        client.resource(model.statefulSet()).forceConflicts().serverSideApply();
    }

    private List<Pod> waitForBoundPods(String cluster, int count) {
        client.pods().inNamespace(namespace).withLabel(ClusterNames.LABEL_INSTANCE, cluster).informOnCondition(pods ->
            pods.size() == count && pods.stream().allMatch(pod -> pod.getSpec().getNodeName() != null))
            .orTimeout(3, TimeUnit.MINUTES).join();
        return client.pods().inNamespace(namespace).withLabel(ClusterNames.LABEL_INSTANCE, cluster).list().getItems();
    }

    private static String describe(List<Pod> pods) {
        return pods.stream().map(pod -> pod.getMetadata().getName() + "@" + pod.getSpec().getNodeName()).toList().toString();
    }

    private void fakeNode(String name, boolean tuned) {
        Map<String, String> labels = new java.util.LinkedHashMap<>();
        labels.put("kubernetes.io/hostname", name);
        labels.put("type", "kwok");
        labels.put("queue-enterprise.io/pool", POOL);
        if (tuned) {
            labels.put(ClusterNames.TUNED_NODE_LABEL, ClusterNames.TUNED_NODE_VALUE);
        }
        List<io.fabric8.kubernetes.api.model.Taint> taints = new ArrayList<>();
        // nothing but this test's pods may land on a node that runs nothing
        taints.add(new io.fabric8.kubernetes.api.model.TaintBuilder().withKey(FAKE).withValue("fake").withEffect("NoSchedule").build());
        if (tuned) {
            taints.add(new io.fabric8.kubernetes.api.model.TaintBuilder().withKey("queue-enterprise.io/dedicated").withValue("true")
                .withEffect("NoSchedule").build());
        }
        // the untuned nodes are far larger: the scheduler's scoring alone would prefer them, only the selector keeps
        // pinned replicas off them (a first version of this test passed by luck without the selector)
        String cpus = tuned ? "8" : "64";
        Node node = new NodeBuilder()
            .withNewMetadata().withName(name).withLabels(labels).withAnnotations(Map.of(FAKE, "fake")).endMetadata()
            .withNewSpec().withTaints(taints).endSpec()
            .withNewStatus()
                .withCapacity(Map.of("cpu", new Quantity(cpus), "memory", new Quantity(tuned ? "32Gi" : "256Gi"), "pods", new Quantity("110")))
                .withAllocatable(Map.of("cpu", new Quantity(cpus), "memory", new Quantity(tuned ? "30Gi" : "250Gi"), "pods", new Quantity("110")))
            .endStatus().build();
        client.nodes().resource(node).create();
    }

    private String localVolume(String node) {
        String name = "qe-kwok-" + UUID.randomUUID().toString().substring(0, 8);
        client.persistentVolumes().resource(new PersistentVolumeBuilder()
            .withNewMetadata().withName(name).endMetadata()
            .withNewSpec()
                .withCapacity(Map.of("storage", new Quantity("1Gi")))
                .withAccessModes("ReadWriteOnce")
                .withStorageClassName(STORAGE_CLASS)
                .withPersistentVolumeReclaimPolicy("Retain")
                // never mounted: fake nodes run nothing
                .withNewLocal().withPath("/nonexistent/kwok-volume").endLocal()
                .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression()
                    .withKey("kubernetes.io/hostname").withOperator("In").withValues(node)
                .endMatchExpression().endNodeSelectorTerm().endRequired().endNodeAffinity()
            .endSpec().build()).create();
        return name;
    }

    private static Path kwokBinary() throws IOException, InterruptedException {
        return Path.of(TestbedEnvironment.value("BIN_DIR"), "kwok");
    }

    @SafeVarargs
    private static List<String> concat(List<String>... lists) {
        List<String> all = new ArrayList<>();
        for (List<String> list : lists) {
            all.addAll(list);
        }
        return all;
    }

}
