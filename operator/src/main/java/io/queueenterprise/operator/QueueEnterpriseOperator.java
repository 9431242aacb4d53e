package io.queueenterprise.operator;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.sun.net.httpserver.HttpExchange;

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
 * (enables leader election), {@code QE_POD_NAME} (the Lease holder's identity: the pod's name, from the downward API;
 * {@code HOSTNAME} would be the node's name in a host-network pod), {@code QE_METRICS_PORT} (default 8080), and
 * {@link OperatorSettings#fromEnvironment}. The metrics port also answers {@code /readyz} (the pod's readiness) and
 * {@code /-/healthy} (its liveness).
 */
public final class QueueEnterpriseOperator implements AutoCloseable {
    public static final String LEASE_NAME = "queue-enterprise-operator";
    public static final String READINESS_PATH = "/readyz";
    private static final Logger LOG = LoggerFactory.getLogger(QueueEnterpriseOperator.class);
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
        this(client, settings, watchedNamespaces, leaseNamespace, null, registry, exitOnLostLeadership);
    }

    /**
     * @param leaseIdentity the Lease holder's name (the pod's name); null: JOSDK's default, {@code HOSTNAME}
     */
    public QueueEnterpriseOperator(KubernetesClient client, OperatorSettings settings, Set<String> watchedNamespaces,
                                   String leaseNamespace, String leaseIdentity, PrometheusRegistry registry,
                                   boolean exitOnLostLeadership) {
        ModelSupport.use(settings);
        operator = new Operator(overrider -> {
            overrider.withKubernetesClient(client).withCloseClientOnStop(false);
            if (leaseNamespace != null) {
                overrider.withLeaderElectionConfiguration(new LeaderElectionConfiguration(LEASE_NAME, leaseNamespace,
                    LeaderElectionConfiguration.LEASE_DURATION_DEFAULT_VALUE, LeaderElectionConfiguration.RENEW_DEADLINE_DEFAULT_VALUE,
                    LeaderElectionConfiguration.RETRY_PERIOD_DEFAULT_VALUE, leaseIdentity, null, exitOnLostLeadership));
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

    /**
     * Ready: started, and every informer connected to the API server (its caches synced). A replica waiting for the
     * Lease is ready too: its informers run, it only does not reconcile; the Lease says which one acts.
     */
    public boolean ready() {
        return operator.getRuntimeInfo().isStarted() && operator.getRuntimeInfo().allEventSourcesAreHealthy();
    }

    /** {@code GET /readyz} on the metrics server: 200 when {@link #ready()}, else 503; any other path not found. */
    private void answerProbe(HttpExchange exchange) throws IOException {
        try (exchange) {
            boolean known = READINESS_PATH.equals(exchange.getRequestURI().getPath());
            boolean ready = known && ready();
            byte[] body = (!known ? "not found\n" : ready ? "ready\n" : "not ready\n").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(!known ? 404 : ready ? 200 : 503, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    @Override
    public void close() {
        operator.stop();
    }

    public static void main(String[] args) throws IOException {
        Map<String, String> environment = System.getenv();
        Set<String> namespaces = Arrays.stream(environment.getOrDefault("QE_WATCH_NAMESPACES", "").split(","))
            .map(String::trim).filter(name -> !name.isEmpty()).collect(Collectors.toSet());
        String metricsPortText = environment.getOrDefault("QE_METRICS_PORT", "8080");
        int metricsPort;
        try {
            metricsPort = Integer.parseInt(metricsPortText.trim());
        } catch (NumberFormatException e) {
            System.err.println("QE_METRICS_PORT must be a port number, not '" + metricsPortText + "'");
            System.exit(2);
            return;
        }
        String leaseIdentity = environment.get("QE_POD_NAME");
        PrometheusRegistry registry = PrometheusRegistry.defaultRegistry;
        KubernetesClient client = new KubernetesClientBuilder().build();
        LOG.info("API server {}, watching {}, Lease {} as {}", client.getConfiguration().getMasterUrl(),
            namespaces.isEmpty() ? "every namespace" : namespaces, environment.get("QE_LEASE_NAMESPACE"), leaseIdentity);
        QueueEnterpriseOperator operator = new QueueEnterpriseOperator(client, OperatorSettings.fromEnvironment(environment),
            namespaces, environment.get("QE_LEASE_NAMESPACE"), leaseIdentity == null || leaseIdentity.isBlank() ? null : leaseIdentity,
            registry, true);
        HTTPServer metrics = HTTPServer.builder().port(metricsPort).registry(registry).registerHealthHandler(true)
            .defaultHandler(operator::answerProbe).buildAndStart();
        operator.operator.installShutdownHook(Duration.ofSeconds(10));
        Runtime.getRuntime().addShutdownHook(new Thread(metrics::close, "metrics-shutdown"));
        operator.start();
    }
}
