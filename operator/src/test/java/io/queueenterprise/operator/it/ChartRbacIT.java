package io.queueenterprise.operator.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import com.marcnuri.helm.Helm;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.kubernetes.testbed.KubernetesTestbed;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.QueueEnterpriseOperator;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.reconciler.ClusterEvents;
import io.queueenterprise.operator.reconciler.EventPublisher;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.api.StorageSpec;
import io.queueenterprise.operator.model.OperatorSettings;

/**
 * The chart's RBAC is enough, and no more: the chart's CRD and its rendered ServiceAccount, roles and bindings are
 * applied to the test bed's real API server, and the operator runs in this JVM AS the chart's ServiceAccount
 * (impersonated) with leader election in the release namespace and one watched namespace. It reconciles a
 * QueueCluster there (every dependent created, status written, the Lease taken, the Pinned condition read from the
 * nodes), and the same identity is refused Secrets of a namespace it does not watch. No operator image is built
 * yet, so the chart's Deployment itself is not run.
 */
@KubernetesTestbed
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@org.junit.jupiter.api.Tag("kubernetes")
class ChartRbacIT {
    private static final Path CHART = Path.of(System.getProperty("qe.helm.chart.dir", "../helm/queue-enterprise-operator"));

    private final Testbed testbed;
    private final KubernetesClient admin;
    private final String suffix = UUID.randomUUID().toString().substring(0, 6);
    private final String release = "qe-rbac-system-" + suffix;
    private final String watched = "qe-rbac-watched-" + suffix;
    private final String elsewhere = "qe-rbac-elsewhere-" + suffix;
    private final List<HasMetadata> rbac = new ArrayList<>();

    ChartRbacIT(Testbed testbed) {
        this.testbed = testbed;
        this.admin = testbed.client();
    }

    @BeforeAll
    void installCrdAndRbac() throws IOException {
        TestbedFixtures.installCrd(admin, CHART.resolve("crds/queueclusters.queue-enterprise.io-v1.yml"));
        for (String namespace : List.of(release, watched, elsewhere)) {
            admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        }
        String manifests = new Helm(CHART).template().withName("qe").withNamespace(release).withKubeVersion("v1.34.4")
            .set("watchNamespaces[0]", watched).call();
        for (HasMetadata item : admin.load(new ByteArrayInputStream(manifests.getBytes(StandardCharsets.UTF_8))).items()) {
            if (Set.of("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding").contains(item.getKind())) {
                rbac.add(admin.resource(item).forceConflicts().serverSideApply());
            }
        }
        assertEquals(Set.of("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
            rbac.stream().map(HasMetadata::getKind).collect(java.util.stream.Collectors.toSet()));
    }

    @AfterAll
    void removeEverything() {
        admin.resources(QueueCluster.class).inNamespace(watched).delete();
        for (String namespace : List.of(release, watched, elsewhere)) {
            admin.namespaces().withName(namespace).delete();
        }
        rbac.stream().filter(item -> item.getMetadata().getNamespace() == null).forEach(item -> admin.resource(item).delete());
        TestbedFixtures.removeCrd(admin);
    }

    private KubernetesClient asChartServiceAccount() throws IOException {
        Config config = new ConfigBuilder(Config.fromKubeconfig(Files.readString(testbed.kubeconfig())))
            .withImpersonateUsername("system:serviceaccount:" + release + ":qe-queue-enterprise-operator").build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    @Test
    void theOperatorReconcilesWithTheChartsRbacAndNothingMore() throws IOException {
        try (KubernetesClient operatorClient = asChartServiceAccount()) {
            KubernetesClientException refused = assertThrows(KubernetesClientException.class,
                () -> operatorClient.secrets().inNamespace(elsewhere).list());
            assertEquals(403, refused.getCode(), "Secrets of an unwatched namespace: " + refused.getMessage());

            OperatorSettings settings = new OperatorSettings(testbed.nodeImage(), "Never", OperatorSettings.DEFAULT_NODE_ARGUMENTS,
                "cluster.local", release, Map.of("app.kubernetes.io/name", "queue-enterprise-operator"));
            try (QueueEnterpriseOperator operator = new QueueEnterpriseOperator(operatorClient, settings, Set.of(watched), release,
                new PrometheusRegistry(), false)) {
                operator.start();
                QueueCluster created = admin.resources(QueueCluster.class).inNamespace(watched).resource(cluster()).create();
                QueueCluster reconciled = admin.resources(QueueCluster.class).inNamespace(watched).withName("rbac")
                    .waitUntilCondition(c -> c != null && c.getStatus() != null && c.getStatus().getObservedGeneration() != null,
                        3, TimeUnit.MINUTES);
                assertEquals(created.getMetadata().getGeneration(), reconciled.getStatus().getObservedGeneration());
                Map<String, String> conditions = new TreeMap<>();
                reconciled.getStatus().getConditions().forEach(c -> conditions.put(c.getType(), c.getStatus() + " " + c.getReason()));
                // the nodes were listed (cluster-wide read): none is labelled as tuned here
                assertEquals("False NoTunedNode", conditions.get("Pinned"), conditions.toString());
                for (String name : List.of("rbac-admin-token", "rbac-peer-credential")) {
                    assertNotNull(admin.secrets().inNamespace(watched).withName(name).get(), name);
                }
                assertNotNull(admin.configMaps().inNamespace(watched).withName("rbac-config").get());
                assertNotNull(admin.services().inNamespace(watched).withName("rbac-nodes").get());
                assertNotNull(admin.apps().statefulSets().inNamespace(watched).withName("rbac").get());
                assertNotNull(admin.policy().v1().podDisruptionBudget().inNamespace(watched).withName("rbac").get());
                assertNotNull(admin.network().v1().networkPolicies().inNamespace(watched).withName("rbac").get());
                var lease = admin.leases().inNamespace(release).withName(QueueEnterpriseOperator.LEASE_NAME).get();
                assertNotNull(lease, "leader election took its Lease in the release namespace");
                assertTrue(lease.getSpec().getHolderIdentity() != null && !lease.getSpec().getHolderIdentity().isEmpty(), lease.toString());
            }
        }
    }

    /**
     * What the reconciler does itself, outside the dependents that the reconcile above exercised, and only now and
     * then: delete a pod (a rolling update's restart, which a read-only rule once refused), create a calibration Job,
     * write an Event. Asked of the API server as the chart's ServiceAccount: allowed in the watched namespace, refused
     * elsewhere.
     */
    @Test
    void theRareWritesAreAllowedInTheWatchedNamespaceOnly() throws IOException {
        try (KubernetesClient operatorClient = asChartServiceAccount()) {
            for (String[] write : List.of(new String[] {"delete", "", "pods"}, new String[] {"create", "batch", "jobs"},
                new String[] {"create", "", "events"}, new String[] {"patch", "queue-enterprise.io", "queueclusters/status"},
                new String[] {"patch", "queue-enterprise.io", "queueclusters"})) {
                assertTrue(allowed(operatorClient, watched, write), String.join(" ", write) + " in the watched namespace");
                assertFalse(allowed(operatorClient, elsewhere, write), String.join(" ", write) + " in an unwatched namespace");
            }
        }
    }

    /**
     * docs/operator.md's two promises about Events, against the real API server as the chart's ServiceAccount: an
     * occurrence is written once, also by a publisher that starts afresh (an operator restarted: the API server's 409
     * on the same name); and where the identity may not write events, publishing is refused quietly, never thrown
     * into the reconcile.
     */
    @Test
    void anEventIsWrittenOnceAcrossPublishersAndARefusedOneDoesNotFailTheCaller() throws IOException {
        try (KubernetesClient operatorClient = asChartServiceAccount()) {
            ClusterEvents.ClusterEvent elected = new ClusterEvents.ClusterEvent("Normal", "LeaderElected", "rbac-0 leads at term 1", "term/1");
            QueueCluster inWatched = inMemoryCluster(watched);
            new EventPublisher().publish(operatorClient, inWatched, elected);
            new EventPublisher().publish(operatorClient, inWatched, elected); // a restarted operator: the same name again
            List<io.fabric8.kubernetes.api.model.Event> written = admin.v1().events().inNamespace(watched).list().getItems().stream()
                .filter(e -> inWatched.getMetadata().getUid().equals(e.getInvolvedObject().getUid())).toList();
            assertEquals(1, written.size(), written.toString());
            assertEquals("LeaderElected", written.get(0).getReason());
            assertEquals("rbac-0 leads at term 1", written.get(0).getMessage());

            QueueCluster inElsewhere = inMemoryCluster(elsewhere);
            new EventPublisher().publish(operatorClient, inElsewhere, elected); // 403: logged, not thrown
            assertTrue(admin.v1().events().inNamespace(elsewhere).list().getItems().stream()
                .noneMatch(e -> inElsewhere.getMetadata().getUid().equals(e.getInvolvedObject().getUid())));
        }
    }

    /** A QueueCluster as the reconciler holds it (never created: an Event may regard any object). */
    private static QueueCluster inMemoryCluster(String namespace) {
        QueueCluster cluster = cluster();
        cluster.getMetadata().setNamespace(namespace);
        cluster.getMetadata().setUid(UUID.randomUUID().toString());
        return cluster;
    }

    private static boolean allowed(KubernetesClient client, String namespace, String[] write) {
        String[] resource = write[2].split("/");
        var review = new io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder().withNewSpec()
            .withNewResourceAttributes().withNamespace(namespace).withVerb(write[0]).withGroup(write[1]).withResource(resource[0])
            .withSubresource(resource.length > 1 ? resource[1] : null).endResourceAttributes().endSpec().build();
        return client.authorization().v1().selfSubjectAccessReview().create(review).getStatus().getAllowed();
    }

    private static QueueCluster cluster() {
        QueueDefinition queue = new QueueDefinition();
        queue.setName("orders");
        queue.setRollCycle(RollCycle.FAST_HOURLY);
        queue.setEncryption(Encryption.NONE);
        QueueClusterSpec spec = new QueueClusterSpec();
        spec.setQueues(List.of(queue));
        spec.setReplicas(1);
        spec.setMemory("256Mi");
        spec.setSharedMemory("64Mi");   // at most half of memory (CEL)
        StorageSpec storage = new StorageSpec();
        storage.setSize("1Gi");
        spec.setStorage(storage);
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName("rbac").build());
        cluster.setSpec(spec);
        return cluster;
    }
}
