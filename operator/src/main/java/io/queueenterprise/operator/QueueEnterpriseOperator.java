package io.queueenterprise.operator;

import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.operator.model.OperatorSettings;
import io.queueenterprise.operator.reconciler.OperatorMetrics;
import io.queueenterprise.operator.reconciler.QueueClusterReconciler;
import io.queueenterprise.operator.reconciler.dependent.ModelSupport;

/**
 * The operator process: one JOSDK {@link Operator} reconciling QueueClusters in the watched namespaces, with leader
 * election (one active replica; the others wait on a Lease) and Prometheus metrics. Configured by environment
 * (the Helm chart sets it): {@code QE_WATCH_NAMESPACES} (comma separated; all when empty), {@code QE_LEASE_NAMESPACE}
 * (enables leader election), {@code QE_METRICS_PORT} (default 8080), and {@link OperatorSettings#fromEnvironment}.
 */
public final class QueueEnterpriseOperator implements AutoCloseable {
    public static final String LEASE_NAME = "queue-enterprise-operator";
    private final Operator operator;

    /**
     * @param watchedNamespaces empty: all namespaces
     * @param leaseNamespace    null: no leader election (a single replica, or a test)
     */
    public QueueEnterpriseOperator(KubernetesClient client, OperatorSettings settings, Set<String> watchedNamespaces,
                                   String leaseNamespace, PrometheusRegistry registry) {
        this(client, settings, watchedNamespaces, leaseNamespace, registry, true);
    }

    /**
     * @param exitOnLostLeadership whether the process exits when it stops leading (it must in a pod: another replica
     *                             leads now and two must never reconcile at once); false only in tests, whose JVM
     *                             goes on after the operator stops
     */
    public QueueEnterpriseOperator(KubernetesClient client, OperatorSettings settings, Set<String> watchedNamespaces,
                                   String leaseNamespace, PrometheusRegistry registry, boolean exitOnLostLeadership) {
        ModelSupport.use(settings);
        operator = new Operator(overrider -> {
            overrider.withKubernetesClient(client).withCloseClientOnStop(false);
            if (leaseNamespace != null) {
                overrider.withLeaderElectionConfiguration(new LeaderElectionConfiguration(LEASE_NAME, leaseNamespace,
                    LeaderElectionConfiguration.LEASE_DURATION_DEFAULT_VALUE, LeaderElectionConfiguration.RENEW_DEADLINE_DEFAULT_VALUE,
                    LeaderElectionConfiguration.RETRY_PERIOD_DEFAULT_VALUE, null, null, exitOnLostLeadership));
            }
        });
        operator.register(new QueueClusterReconciler(new OperatorMetrics(registry)), override -> {
            if (watchedNamespaces.isEmpty()) {
                override.watchingAllNamespaces();
            } else {
                override.settingNamespaces(watchedNamespaces);
            }
        });
    }

    public void start() {
        operator.start();
    }

    @Override
    public void close() {
        operator.stop();
    }

    public static void main(String[] args) throws IOException {
        Map<String, String> environment = System.getenv();
        Set<String> namespaces = Arrays.stream(environment.getOrDefault("QE_WATCH_NAMESPACES", "").split(","))
            .map(String::trim).filter(name -> !name.isEmpty()).collect(Collectors.toSet());
        int metricsPort = Integer.parseInt(environment.getOrDefault("QE_METRICS_PORT", "8080"));
        PrometheusRegistry registry = PrometheusRegistry.defaultRegistry;
        KubernetesClient client = new KubernetesClientBuilder().build();
        QueueEnterpriseOperator operator = new QueueEnterpriseOperator(client, OperatorSettings.fromEnvironment(environment),
            namespaces, environment.get("QE_LEASE_NAMESPACE"), registry);
        HTTPServer metrics = HTTPServer.builder().port(metricsPort).registry(registry).buildAndStart();
        operator.operator.installShutdownHook(Duration.ofSeconds(10));
        Runtime.getRuntime().addShutdownHook(new Thread(metrics::close, "metrics-shutdown"));
        operator.start();
    }
}
