package io.queueenterprise.operator.reconciler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import com.marcnuri.helm.Helm;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.operator.api.Encryption;
import io.queueenterprise.operator.api.FailoverStatus;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.QueueDefinition;
import io.queueenterprise.operator.api.RollCycle;
import io.queueenterprise.operator.failover.FailoverExecutor;
import io.queueenterprise.operator.failover.NodeStatusView;
import io.queueenterprise.operator.failover.ReplicaObservation;

/**
 * The chart's alerts (templates/prometheusrule.yaml, rendered by Helm) evaluated by Prometheus's own rule engine
 * ({@code promtool test rules}) against what this operator's {@link OperatorMetrics} exports, in its text exposition
 * format, for clusters in each state: each state is one QueueCluster whose status {@link StatusModel} builds from
 * node observations as a reconcile does. The test asserts exactly which alerts fire for which cluster, so an alert
 * that fires where it should not (Pinned False for a {@code pinned: false} cluster) fails it as much as a silent one.
 * Needs {@code promtool} (Debian package {@code prometheus}, installed by scripts/install-test-packages.sh); skips,
 * saying so, only where it cannot be installed.
 */
@org.junit.jupiter.api.Tag("process")
class PrometheusRuleTest {
    private static final Path CHART = Path.of(System.getProperty("qe.helm.chart.dir", "../helm/queue-enterprise-operator"));
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER));
    private static final List<String> REPLICAS = List.of("q-0", "q-1", "q-2");
    private static final FailoverExecutor.Outcome STEADY = new FailoverExecutor.Outcome("q-0", 3, true, List.of());
    private static final String NOW = "2026-11-26T10:00:00Z";
    /** Minutes of constant samples before the failover counter moves, and the time every alert is judged at. */
    private static final int COUNTER_MOVES_AT_MINUTE = 15;
    private static final String EVAL_TIME = "20m";

    private record State(QueueCluster cluster, QueueClusterStatus status, boolean failoverStarted, Set<String> firing) {
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void eachAlertFiresForExactlyTheClustersInItsStateOnTheMetricsTheOperatorExports(@TempDir Path dir) throws Exception {
        String promtool = promtool();
        JsonNode rules = renderedRules();
        Set<String> alerts = new TreeSet<>();
        rules.at("/groups/0/rules").forEach(r -> alerts.add(r.get("alert").asText()));

        List<State> states = states();
        for (String alert : alerts) {
            assertTrue(states.stream().anyMatch(s -> s.firing().contains(alert)), alert + ": no state where it fires");
            assertTrue(states.stream().anyMatch(s -> !s.firing().contains(alert)), alert + ": no state where it stays silent");
        }

        PrometheusRegistry registry = new PrometheusRegistry();
        OperatorMetrics metrics = new OperatorMetrics(registry);
        for (State state : states) {
            metrics.reconciled(state.cluster(), "Steady");
            metrics.publish(state.cluster(), state.status());
        }
        Map<String, String> before = exported(registry);
        for (State state : states) {
            if (state.failoverStarted()) {
                metrics.failover(state.cluster());
            }
        }
        Map<String, String> after = exported(registry);

        Files.writeString(dir.resolve("rules.yaml"), YAML.writeValueAsString(rules));
        Files.writeString(dir.resolve("test.yaml"), YAML.writeValueAsString(promtoolTest(before, after, states)));
        Process process = new ProcessBuilder(promtool, "test", "rules", "test.yaml").directory(dir.toFile())
            .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "promtool did not finish");
        assertEquals(0, process.exitValue(), "promtool test rules:\n" + output);
    }

    @Test
    void aConditionsReasonIsOneSeriesWhichMovesWithTheReason() {
        PrometheusRegistry registry = new PrometheusRegistry();
        OperatorMetrics metrics = new OperatorMetrics(registry);
        State lost = states().stream().filter(s -> s.cluster().getMetadata().getName().equals("pinning-lost")).findFirst().orElseThrow();
        metrics.publish(lost.cluster(), lost.status());
        metrics.publish(lost.cluster(), StatusModel.build(lost.cluster(), new QueueClusterStatus(), REPLICAS,
            healthy("1", "2", "3", 2, List.of()), STEADY, 3, Map.of(), NOW));   // the core came back
        List<String> pinnedReasons = exported(registry).keySet().stream()
            .filter(s -> s.startsWith("queue_enterprise_cluster_condition_reason{") && s.contains("type=\"Pinned\"")).toList();
        assertEquals(1, pinnedReasons.size(), pinnedReasons.toString());
        assertTrue(pinnedReasons.get(0).contains("reason=\"ExclusiveCores\""), pinnedReasons.toString());
        assertEquals("0.0", exported(registry).get(
            "queue_enterprise_operator_failovers_total{job=\"qe-operator\",cluster=\"pinning-lost\",namespace=\"trading\"}"),
            "a cluster's failover counter is exported from its first reconcile, at 0");
    }

    /** The PrometheusRule's spec (its groups) with annotations dropped: their wording is not under test here. */
    private static JsonNode renderedRules() throws IOException {
        String manifests = new Helm(CHART).template().withName("qe").withNamespace("queue-enterprise-system")
            .withKubeVersion("v1.34.4").set("prometheusRule.enabled", "true").call();
        try (YAMLParser parser = new YAMLFactory().createParser(manifests)) {
            for (var documents = YAML.readValues(parser, JsonNode.class); documents.hasNext(); ) {
                JsonNode document = documents.next();
                if (document != null && "PrometheusRule".equals(document.path("kind").asText())) {
                    JsonNode spec = document.get("spec").deepCopy();
                    spec.at("/groups/0/rules").forEach(rule -> ((ObjectNode) rule).remove("annotations"));
                    return spec;
                }
            }
        }
        throw new AssertionError("no PrometheusRule rendered:\n" + manifests);
    }

    /** {@code series -> value} as the operator's /metrics endpoint writes it, with the labels a scrape adds. */
    private static Map<String, String> exported(PrometheusRegistry registry) {
        Map<String, String> samples = new TreeMap<>();
        for (String line : PrometheusTextFormatWriter.create().toDebugString(registry.scrape()).split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            String series = line.substring(0, space);
            String scraped = series.contains("{") ? series.replace("{", "{job=\"qe-operator\",") : series + "{job=\"qe-operator\"}";
            samples.put(scraped, line.substring(space + 1));
        }
        return samples;
    }

    private static Map<String, Object> promtoolTest(Map<String, String> before, Map<String, String> after, List<State> states) {
        List<Map<String, Object>> series = new ArrayList<>();
        for (Map.Entry<String, String> sample : after.entrySet()) {
            String earlier = before.get(sample.getKey());
            String values = (earlier == null ? "_x" + (COUNTER_MOVES_AT_MINUTE - 1) : earlier + "+0x" + (COUNTER_MOVES_AT_MINUTE - 1))
                + " " + sample.getValue() + "+0x15";
            series.add(Map.of("series", sample.getKey(), "values", values));
        }
        List<Map<String, Object>> firing = new ArrayList<>();
        for (State state : states) {
            for (String alert : new TreeSet<>(state.firing())) {
                firing.add(Map.of("labels", "{alertname=\"" + alert + "\", cluster=\"" + state.cluster().getMetadata().getName() + "\"}",
                    "value", 1));
            }
        }
        Map<String, Object> test = new LinkedHashMap<>();
        test.put("interval", "1m");
        test.put("input_series", series);
        test.put("promql_expr_test", List.of(Map.of("expr", "count by (alertname, cluster) (ALERTS{alertstate=\"firing\"})",
            "eval_time", EVAL_TIME, "exp_samples", firing)));
        Map<String, Object> file = new LinkedHashMap<>();
        file.put("rule_files", List.of("rules.yaml"));
        file.put("evaluation_interval", "1m");
        file.put("tests", List.of(test));
        return file;
    }

    /** One cluster per state, its status as a reconcile builds it, and the alerts that must fire for it (and no other). */
    private static List<State> states() {
        List<State> states = new ArrayList<>();
        // pinned, every replica on its one exclusive core, followers close behind
        states.add(state("pinned", true, healthy("1", "2", "3", 2, List.of()), STEADY, 3, null, false, Set.of()));
        // pinned: false: the Pinned condition is False (NotRequested), which is what was asked for
        states.add(state("unpinned", false, healthy("0-7", "0-7", "0-7", 2, List.of()), STEADY, 3, null, false, Set.of()));
        // pinned, but one replica got the shared pool (a node without the static CPU manager policy)
        states.add(state("pinning-lost", true, healthy("1", "0-7", "3", 2, List.of()), STEADY, 3, null, false,
            Set.of("QueueEnterprisePinningLost")));
        // pinned, no tuned node at all: the replicas cannot be scheduled, none answers
        states.add(state("no-tuned-node", true, Map.of(), STEADY, 0, null, false,
            Set.of("QueueEnterprisePinningLost", "QueueEnterpriseNoQuorum")));
        // two of three replicas down: their cores are not reported, which is no evidence of lost pinning
        Map<String, ReplicaObservation> oneAnswers = new LinkedHashMap<>();
        oneAnswers.put("q-0", healthy("1", "2", "3", 2, List.of()).get("q-0"));
        states.add(state("no-quorum", true, oneAnswers, STEADY, 3, null, false, Set.of("QueueEnterpriseNoQuorum")));
        states.add(state("lagging", true, healthy("1", "2", "3", 250_000, List.of()), STEADY, 3, null, false,
            Set.of("QueueEnterpriseReplicaLagging")));
        // the operator replaced the leader and the new one is in place
        states.add(state("failed-over", true, healthy("1", "2", "3", 2, List.of()), STEADY, 3, null, true,
            Set.of("QueueEnterpriseFailover")));
        // a failover started long ago (its counter moved outside the alert's window) has not completed
        FailoverStatus promoting = new FailoverStatus();
        promoting.setPhase(FailoverStatus.Phase.PROMOTING);
        promoting.setTerm(4L);
        promoting.setFormerLeader("q-0");
        promoting.setCandidate("q-1");
        states.add(state("failover-stuck", true, healthy("1", "2", "3", 2, List.of()),
            new FailoverExecutor.Outcome("q-1", 4, false, List.of("q-1 not yet leader at term 4")), 3, promoting, false,
            Set.of("QueueEnterpriseFailoverStuck")));
        states.add(state("replica-problem", true, healthy("1", "2", "3", 2, List.of("CORRUPTED")), STEADY, 3, null, false,
            Set.of("QueueEnterpriseReplicaProblem")));
        states.add(state("quarantined", true, healthy("1", "2", "3", 2, List.of("QUARANTINE")), STEADY, 3, null, false,
            Set.of("QueueEnterpriseQuarantineHeld")));
        return states;
    }

    private static State state(String name, boolean pinned, Map<String, ReplicaObservation> observations,
                               FailoverExecutor.Outcome outcome, int tunedNodes, FailoverStatus failover,
                               boolean failoverStarted, Set<String> firing) {
        QueueCluster cluster = cluster(name, pinned);
        QueueClusterStatus previous = new QueueClusterStatus();
        previous.setFailover(failover);
        QueueClusterStatus status = StatusModel.build(cluster, previous, REPLICAS, observations, outcome, tunedNodes, Map.of(), NOW);
        return new State(cluster, status, failoverStarted, firing);
    }

    private static QueueCluster cluster(String name, boolean pinned) {
        QueueDefinition queue = new QueueDefinition();
        queue.setName("orders");
        queue.setRollCycle(RollCycle.FAST_HOURLY);
        queue.setEncryption(Encryption.NONE);
        QueueClusterSpec spec = new QueueClusterSpec();
        spec.setQueues(List.of(queue));
        spec.setPinned(pinned);
        spec.setCoresPerReplica(pinned ? "1" : "500m");
        QueueCluster cluster = new QueueCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("trading").withGeneration(1L).build());
        cluster.setSpec(spec);
        return cluster;
    }

    /**
     * Three answering replicas led by q-0; q-2 is {@code lag} excerpts behind; {@code q2Trouble}: "CORRUPTED" (its
     * queue needs attention) or "QUARANTINE" (it moved excerpts to quarantine).
     */
    private static Map<String, ReplicaObservation> healthy(String cpus0, String cpus1, String cpus2, long lag, List<String> q2Trouble) {
        Map<String, ReplicaObservation> observations = new LinkedHashMap<>();
        List<NodeStatusView.Peer> peers = List.of(new NodeStatusView.Peer("q-1", true, 1_000_000, 1, 1000, "LIVE"),
            new NodeStatusView.Peer("q-2", true, 1_000_000 - lag, lag, 5000, "LIVE"));
        observations.put("q-0", node("q-0", NodeStatusView.LEADER, cpus0,
            new NodeStatusView.Queue("orders", "LIVE", 1_000_000, 1_000_000, -1, 0, peers, 0, 0)));
        observations.put("q-1", node("q-1", NodeStatusView.FOLLOWER, cpus1,
            new NodeStatusView.Queue("orders", "LIVE", 999_999, 999_999, -1, 0, List.of(), 0, 0)));
        String state = q2Trouble.contains("CORRUPTED") ? "CORRUPTED" : "LIVE";
        NodeStatusView.Quarantines quarantines = q2Trouble.contains("QUARANTINE")
            ? new NodeStatusView.Quarantines(1, "a changed byte", NOW, "/data/quarantine/orders-1", 12) : null;
        observations.put("q-2", node("q-2", NodeStatusView.FOLLOWER, cpus2, new NodeStatusView.Queue("orders", state,
            1_000_000 - lag, 1_000_000 - lag, -1, 0, List.of(), 0, 0, "", null, quarantines)));
        return observations;
    }

    private static ReplicaObservation node(String name, String role, String cpus, NodeStatusView.Queue queue) {
        return new ReplicaObservation.Reachable(name, new NodeStatusView(name, role, 3, "q-0", List.of(queue), cpus));
    }

    /** promtool on the PATH, installed through the project's script when missing; a skip only where that fails. */
    private static String promtool() throws IOException, InterruptedException {
        for (String candidate : List.of("/usr/bin/promtool", "/usr/local/bin/promtool")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return candidate;
            }
        }
        Path script = Path.of(System.getProperty("qe.project.dir", "..")).resolve("scripts/install-test-packages.sh");
        Process install = new ProcessBuilder("bash", script.toString(), "prometheus").redirectErrorStream(true).start();
        String output = new String(install.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        boolean done = install.waitFor(5, TimeUnit.MINUTES);
        Assumptions.assumeTrue(done && install.exitValue() == 0 && Files.isExecutable(Path.of("/usr/bin/promtool")),
            "promtool (Debian package prometheus) is missing and scripts/install-test-packages.sh prometheus could not install it: "
                + output.lines().reduce((a, b) -> b).orElse(""));
        return "/usr/bin/promtool";
    }
}
