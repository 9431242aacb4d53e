package io.queueenterprise.operator.helm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.reconciler.CalibrationProgress;
import io.queueenterprise.operator.reconciler.Conditions;
import io.queueenterprise.operator.reconciler.OperatorMetrics;

/** The chart, linted and rendered by the Helm library that helm-java bundles (no helm binary, no cluster). */
@org.junit.jupiter.api.Tag("unit")
class HelmChartTest {
    private static final Path CHART = Path.of(System.getProperty("qe.helm.chart.dir", "../helm/queue-enterprise-operator"));
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final ObjectMapper JSON = new ObjectMapper();

    private static List<JsonNode> render(String... sets) throws IOException {
        var template = new Helm(CHART).template().withName("qe").withNamespace("queue-enterprise-system")
            .withKubeVersion("v1.34.4");   // the version the test bed runs
        for (int i = 0; i < sets.length; i += 2) {
            template.set(sets[i], sets[i + 1]);
        }
        List<JsonNode> documents = new ArrayList<>();
        try (YAMLParser parser = new YAMLFactory().createParser(template.call())) {
            for (var iterator = YAML.readValues(parser, JsonNode.class); iterator.hasNext(); ) {
                JsonNode document = iterator.next();
                if (document != null && !document.isNull() && document.size() > 0) {
                    documents.add(document);
                }
            }
        }
        return documents;
    }

    private static List<JsonNode> ofKind(List<JsonNode> documents, String kind) {
        return documents.stream().filter(d -> kind.equals(d.path("kind").asText())).toList();
    }

    @Test
    void lintsCleanInStrictMode() {
        LintResult result = new Helm(CHART).lint().strict().call();
        assertFalse(result.isFailed(), String.join("\n", result.getMessages()));
    }

    @Test
    void defaultInstallIsARestrictedOperatorWatchingEveryNamespaceWithLeaderElection() throws IOException {
        List<JsonNode> documents = render();
        JsonNode deployment = ofKind(documents, "Deployment").get(0);
        JsonNode pod = deployment.at("/spec/template/spec");
        assertEquals(2, deployment.at("/spec/replicas").asInt());
        assertEquals("queue-enterprise-operator", deployment.at("/spec/template/metadata/labels/app.kubernetes.io~1name").asText(),
            "the QueueClusters' NetworkPolicies admit pods with this label to the admin port");
        assertTrue(pod.at("/securityContext/runAsNonRoot").asBoolean());
        assertEquals("RuntimeDefault", pod.at("/securityContext/seccompProfile/type").asText());
        JsonNode container = pod.at("/containers/0");
        assertFalse(container.at("/securityContext/allowPrivilegeEscalation").asBoolean(true));
        assertTrue(container.at("/securityContext/readOnlyRootFilesystem").asBoolean());
        assertEquals("[\"ALL\"]", container.at("/securityContext/capabilities/drop").toString());
        assertEquals("", env(container, "QE_WATCH_NAMESPACES"));
        assertEquals("queue-enterprise-system", env(container, "QE_LEASE_NAMESPACE"));
        assertEquals("queue-enterprise.local/node:0.1.0-SNAPSHOT", env(container, "QE_NODE_IMAGE"));
        // the operator prefers nodes off the tuned pool (schedulableOnAOneNodeTunedClusterAndNeverCompetingForCores: only prefers)
        assertEquals("DoesNotExist", pod.at("/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution/0/preference/matchExpressions/0/operator").asText());
        assertEquals(1, ofKind(documents, "ClusterRoleBinding").stream()
            .filter(b -> b.at("/roleRef/name").asText().equals("qe-queue-enterprise-operator")).count(), "cluster-wide when no namespaces are listed");
        assertTrue(ofKind(documents, "CustomResourceDefinition").isEmpty(), "CRDs come from crds/, not templates");
        assertTrue(ofKind(documents, "PrometheusRule").isEmpty());
        assertTrue(ofKind(documents, "QueueCluster").isEmpty());
        // the pod network and the kubelet's own API server address, unless a cluster without kube-proxy says otherwise
        assertTrue(pod.path("hostNetwork").isMissingNode(), pod.toString());
        assertTrue(hasNoEnv(container, "KUBERNETES_SERVICE_HOST"), container.toString());
        assertEquals("metadata.name", container.at("/env/0/valueFrom/fieldRef/fieldPath").asText(), "QE_POD_NAME: the Lease holder");
        assertEquals("QE_POD_NAME", container.at("/env/0/name").asText());
        assertEquals("/readyz", container.at("/readinessProbe/httpGet/path").asText());
        assertEquals("/-/healthy", container.at("/livenessProbe/httpGet/path").asText());
        assertEquals("/-/healthy", container.at("/startupProbe/httpGet/path").asText());
        assertEquals("queue-enterprise.local/operator:0.1.0-SNAPSHOT", container.at("/image").asText(),
            "the image kubernetes/build-image.sh operator builds, tagged with the project version");
    }

    @Test
    void aClusterWithoutARoutedKubernetesServiceGetsTheApiServerAddressAndTheHostNetwork() throws IOException {
        JsonNode pod = ofKind(render("hostNetwork", "true", "kubernetesApiServer.host", "127.0.0.1",
            "kubernetesApiServer.port", "16443"), "Deployment").get(0).at("/spec/template/spec");
        assertTrue(pod.at("/hostNetwork").asBoolean());
        assertEquals("ClusterFirstWithHostNet", pod.at("/dnsPolicy").asText());
        JsonNode container = pod.at("/containers/0");
        assertEquals("127.0.0.1", env(container, "KUBERNETES_SERVICE_HOST"));
        assertEquals("16443", env(container, "KUBERNETES_SERVICE_PORT"));
        Exception noPort = assertThrows(Exception.class, () -> render("kubernetesApiServer.host", "127.0.0.1"));
        assertTrue(noPort.getMessage().contains("kubernetesApiServer.port is required"), noPort.getMessage());
        Exception badPort = assertThrows(Exception.class, () -> render("kubernetesApiServer.host", "127.0.0.1",
            "kubernetesApiServer.port", "api"));
        assertTrue(badPort.getMessage().contains("kubernetesApiServer"), badPort.getMessage());
    }

    /**
     * A single-replica leader-elected operator gains nothing from a surge pod, and with the host network the surge pod
     * cannot start while the old one holds metrics.port (helm upgrade waited 120 s for it, then left it Pending).
     */
    @Test
    void theOldOperatorPodGoesBeforeItsReplacementInEveryNetworkingMode() throws IOException {
        List<String[]> modes = List.of(new String[0], new String[] {"replicaCount", "1"},
            new String[] {"hostNetwork", "true", "kubernetesApiServer.host", "127.0.0.1", "kubernetesApiServer.port", "16443",
                "replicaCount", "1"},
            new String[] {"hostNetwork", "true", "kubernetesApiServer.host", "127.0.0.1", "kubernetesApiServer.port", "16443"});
        for (String[] mode : modes) {
            JsonNode strategy = ofKind(render(mode), "Deployment").get(0).at("/spec/strategy");
            boolean recreate = "Recreate".equals(strategy.path("type").asText());
            boolean noSurge = "RollingUpdate".equals(strategy.path("type").asText())
                && "0".equals(strategy.at("/rollingUpdate/maxSurge").asText()) && strategy.at("/rollingUpdate/maxUnavailable").asInt() >= 1;
            assertTrue(recreate || noSurge, String.join(" ", mode) + ": a surge pod would wait on the old one: " + strategy);
        }
    }

    /**
     * docs/operator.md and NOTES.txt tell users to label and taint their tuned nodes; on a one-node cluster that node is
     * the only one. The operator must still be schedulable there (at its next restart, not only at install), and must
     * never take CPU the kubelet could grant a pinned replica exclusively (a request counts against allocatable cores:
     * 100m left the test bed's one exclusive core ungrantable).
     */
    @Test
    void schedulableOnAOneNodeTunedClusterAndNeverCompetingForCores() throws IOException {
        Map<String, String> tunedNodeLabels = Map.of("queue-enterprise.io/cpu-manager-policy", "static", "queue-enterprise.io/pool", "tuned");
        String notes = Files.readString(CHART.resolve("templates/NOTES.txt"));
        assertTrue(notes.contains("queue-enterprise.io/cpu-manager-policy=static queue-enterprise.io/pool=tuned")
            && notes.contains("queue-enterprise.io/dedicated=true:NoSchedule"), "the labels and taint NOTES.txt tells users to set");
        for (String[] mode : List.of(new String[0], new String[] {"hostNetwork", "true", "kubernetesApiServer.host", "127.0.0.1",
                "kubernetesApiServer.port", "16443", "replicaCount", "1"})) {
            JsonNode pod = ofKind(render(mode), "Deployment").get(0).at("/spec/template/spec");
            pod.path("nodeSelector").fields().forEachRemaining(e ->
                assertEquals(e.getValue().asText(), tunedNodeLabels.get(e.getKey()), "nodeSelector excludes the tuned node: " + e));
            JsonNode required = pod.at("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms");
            assertTrue(required.isMissingNode() || required.isEmpty(), "a required node affinity can exclude the only node: " + required);
            boolean toleratesTaint = false;
            for (JsonNode toleration : pod.path("tolerations")) {
                toleratesTaint |= "queue-enterprise.io/dedicated".equals(toleration.path("key").asText())
                    && ("Exists".equals(toleration.path("operator").asText()) || "true".equals(toleration.path("value").asText()))
                    && (toleration.path("effect").asText().isEmpty() || "NoSchedule".equals(toleration.path("effect").asText()));
            }
            assertTrue(toleratesTaint, "the tuned pool's taint is not tolerated: " + pod.path("tolerations"));
            for (JsonNode container : pod.path("containers")) {
                assertTrue(container.at("/resources/requests/cpu").isMissingNode() && container.at("/resources/limits/cpu").isMissingNode(),
                    "a CPU request is taken from the cores a pinned replica could be granted: " + container.path("resources"));
            }
        }
    }

    /**
     * The chart's cluster checks (Prometheus Operator CRDs, watched namespaces; OperatorDeploymentIT sees them refuse a
     * real install in one line) apply only where Helm sees a cluster: offline rendering, as GitOps tools do, still
     * renders every object, and the check is part of the one template every install renders.
     */
    @Test
    void offlineRenderingChecksNothingItCannotSee() throws IOException {
        List<JsonNode> documents = render("prometheusRule.enabled", "true", "metrics.serviceMonitor.enabled", "true",
            "watchNamespaces[0]", "not-created-yet");
        assertEquals(1, ofKind(documents, "PrometheusRule").size());
        assertEquals(1, ofKind(documents, "ServiceMonitor").size());
        assertTrue(Files.readString(CHART.resolve("templates/deployment.yaml")).startsWith("{{- include \"qe-operator.checkCluster\" . }}"));
    }

    /** What a refused install prints: one line naming the value, what the cluster lacks and what to do. */
    @Test
    void everyClusterCheckFailsInOneLineNamingItsValue() throws IOException {
        String helpers = Files.readString(CHART.resolve("templates/_helpers.tpl"));
        Matcher fail = Pattern.compile("fail (?:\\(printf )?\"([^\"]*)\"").matcher(helpers);
        Set<String> named = new TreeSet<>();
        while (fail.find()) {
            String message = fail.group(1);
            assertFalse(message.contains("\\n"), message);
            Matcher value = Pattern.compile("^(prometheusRule\\.enabled|metrics\\.serviceMonitor\\.enabled|watchNamespaces)").matcher(message);
            assertTrue(value.find(), "names the value it refuses: " + message);
            assertTrue(message.contains("first"), "says what to do: " + message);
            named.add(value.group(1));
        }
        assertEquals(Set.of("prometheusRule.enabled", "metrics.serviceMonitor.enabled", "watchNamespaces"), named);
    }

    @Test
    void watchedNamespacesGetRolesAndNothingWritableIsClusterWide() throws IOException {
        List<JsonNode> documents = render("watchNamespaces[0]", "trading", "watchNamespaces[1]", "telemetry");
        assertEquals(Set.of("trading", "telemetry"), ofKind(documents, "RoleBinding").stream()
            .filter(b -> b.at("/roleRef/name").asText().equals("qe-queue-enterprise-operator"))
            .map(b -> b.at("/metadata/namespace").asText()).collect(Collectors.toSet()));
        assertEquals("trading,telemetry", env(ofKind(documents, "Deployment").get(0).at("/spec/template/spec/containers/0"), "QE_WATCH_NAMESPACES"));
        for (JsonNode clusterRole : ofKind(documents, "ClusterRole")) {
            for (JsonNode rule : clusterRole.get("rules")) {
                for (JsonNode verb : rule.get("verbs")) {
                    assertTrue(Set.of("get", "list").contains(verb.asText()), "cluster-wide write: " + clusterRole);
                }
            }
        }
    }

    @Test
    void rbacNeverUsesWildcards() throws IOException {
        for (JsonNode role : concat(ofKind(render(), "ClusterRole"), ofKind(render("watchNamespaces[0]", "a"), "Role"))) {
            for (JsonNode rule : role.get("rules")) {
                for (String field : List.of("apiGroups", "resources", "verbs")) {
                    for (JsonNode value : rule.get(field)) {
                        assertFalse(value.asText().contains("*"), role.at("/metadata/name") + ": wildcard in " + field);
                    }
                }
            }
        }
    }

    @Test
    void alertsCoverLagQuorumFailoverPinningAndReplicaHealthOnMetricsAndConditionsTheOperatorWrites() throws IOException {
        JsonNode rule = ofKind(render("prometheusRule.enabled", "true"), "PrometheusRule").get(0);
        Set<String> alerts = new TreeSet<>();
        StringBuilder expressions = new StringBuilder();
        for (JsonNode alert : rule.at("/spec/groups/0/rules")) {
            alerts.add(alert.get("alert").asText());
            expressions.append(alert.get("expr").asText()).append('\n');
            assertTrue(alert.at("/annotations/summary").asText().contains("{{ $labels.cluster }}"), "Prometheus templating survives Helm");
        }
        assertEquals(Set.of("QueueEnterpriseReplicaLagging", "QueueEnterpriseNoQuorum", "QueueEnterpriseFailover",
            "QueueEnterpriseFailoverStuck", "QueueEnterprisePinningLost", "QueueEnterpriseReplicaProblem",
            "QueueEnterpriseQuarantineHeld"), alerts);
        assertExported(expressions.toString());
        // a condition type the operator never writes would leave its alert silent forever
        Set<String> written = Set.of(Conditions.READY, Conditions.QUORUM, Conditions.PINNED, Conditions.FAILOVER,
            Conditions.REPLICAS_HEALTHY, Conditions.QUARANTINED, CalibrationProgress.CALIBRATED);
        Matcher type = Pattern.compile("type=\"([^\"]*)\"").matcher(expressions);
        int types = 0;
        while (type.find()) {
            types++;
            assertTrue(written.contains(type.group(1)), "alerts on condition " + type.group(1) + ", which the operator does not write");
        }
        assertTrue(types >= 5, expressions.toString());
    }

    @Test
    void dashboardIsValidJsonOnMetricsTheOperatorExports() throws IOException {
        JsonNode configMap = ofKind(render("grafanaDashboard.enabled", "true"), "ConfigMap").get(0);
        assertEquals("1", configMap.at("/metadata/labels/grafana_dashboard").asText());
        JsonNode dashboard = JSON.readTree(configMap.at("/data/queue-enterprise.json").asText());
        assertEquals("Queue Enterprise", dashboard.get("title").asText());
        StringBuilder expressions = new StringBuilder();
        dashboard.get("panels").forEach(panel -> panel.get("targets").forEach(t -> expressions.append(t.get("expr").asText()).append('\n')));
        assertExported(expressions.toString());
    }

    @Test
    void exampleQueueClusterIsTheChartsExampleFileOnTheTunedPool() throws IOException {
        JsonNode rendered = ofKind(render("example.enabled", "true"), "QueueCluster").get(0);
        JsonNode file = YAML.readTree(Files.readString(CHART.resolve("examples/queuecluster.yaml")));
        ((ObjectNode) file.get("metadata")).put("namespace", "queue-enterprise-system");
        assertEquals(file, rendered);
        QueueCluster typed = YAML.treeToValue(rendered, QueueCluster.class);
        assertEquals(3, typed.getSpec().getReplicas());
        assertEquals("tuned", typed.getSpec().getNodePool().getNodeSelector().get("queue-enterprise.io/pool"));
    }

    @Test
    void valuesOutsideTheSchemaAreRefusedWithTheirName() {
        Exception zero = assertThrows(Exception.class, () -> render("replicaCount", "0"));
        assertTrue(zero.getMessage().contains("replicaCount"), zero.getMessage());
        Exception unknown = assertThrows(Exception.class, () -> render("watchNamespace", "typo"));
        assertTrue(unknown.getMessage().contains("watchNamespace"), unknown.getMessage());
    }

    @Test
    void chartShipsTheGeneratedCrdUnchanged() throws IOException {
        Path generated = Path.of(System.getProperty("qe.crd.file", "target/classes/META-INF/fabric8/queueclusters.queue-enterprise.io-v1.yml"));
        assertEquals(Files.readString(generated), Files.readString(CHART.resolve("crds/queueclusters.queue-enterprise.io-v1.yml")),
            "helm/queue-enterprise-operator/crds/ differs from the CRD generated from operator.api: rebuild the operator module");
    }

    /** Every queue_enterprise_* metric name in the expressions is one the operator registers. */
    private static void assertExported(String expressions) {
        PrometheusRegistry registry = new PrometheusRegistry();
        new OperatorMetrics(registry);
        Set<String> exported = registry.scrape().stream()
            .flatMap(snapshot -> {
                String name = snapshot.getMetadata().getPrometheusName();
                if (snapshot.getClass().getSimpleName().startsWith("Histogram")) {
                    return java.util.stream.Stream.of(name + "_bucket", name + "_sum", name + "_count");
                }
                return snapshot.getClass().getSimpleName().startsWith("Counter") ? java.util.stream.Stream.of(name + "_total")
                    : java.util.stream.Stream.of(name);
            })
            .collect(Collectors.toSet());
        Matcher names = Pattern.compile("queue_enterprise_[a-z_]+").matcher(expressions);
        int found = 0;
        while (names.find()) {
            found++;
            assertTrue(exported.contains(names.group()), names.group() + " is not exported; exported: " + exported);
        }
        assertTrue(found > 0);
    }

    private static String env(JsonNode container, String name) {
        for (JsonNode variable : container.get("env")) {
            if (variable.get("name").asText().equals(name)) {
                return variable.get("value").asText();
            }
        }
        throw new AssertionError("no env " + name);
    }

    private static boolean hasNoEnv(JsonNode container, String name) {
        for (JsonNode variable : container.get("env")) {
            if (variable.get("name").asText().equals(name)) {
                return false;
            }
        }
        return true;
    }

    private static List<JsonNode> concat(List<JsonNode> first, List<JsonNode> second) {
        List<JsonNode> all = new ArrayList<>(first);
        all.addAll(second);
        return all;
    }
}
