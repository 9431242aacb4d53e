package io.queueenterprise.operator;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;


import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.queueenterprise.operator.api.QueueCluster;
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
    private static final Logger LOG = LoggerFactory.getLogger(QueueEnterpriseOperator.class);
    private final Operator operator;
    private final KubernetesClient client;
    private final Set<String> watchedNamespaces;
    private final OperatorMetrics metrics;
    /** Informers that only hear QueueClusters deleted, so that their metric series go with them. */
    private final List<SharedIndexInformer<QueueCluster>> deletions = new ArrayList<>();

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
        this.client = client;
        this.watchedNamespaces = watchedNamespaces;
        this.metrics = new OperatorMetrics(registry);
        operator.register(new QueueClusterReconciler(metrics), override -> {
            if (watchedNamespaces.isEmpty()) {
                override.watchingAllNamespaces();
            } else {
                override.settingNamespaces(watchedNamespaces);
            }
        });
    }

    public void start() {
        operator.start();
        // JOSDK tells a reconciler of a deletion only through a finalizer (Cleaner), which would make deleting a
        // QueueCluster wait for a running operator; a plain informer hears the deletion without holding it up.
        ResourceEventHandler<QueueCluster> forgetDeleted = new ResourceEventHandler<>() {
            @Override
            public void onAdd(QueueCluster cluster) {
            }

            @Override
            public void onUpdate(QueueCluster before, QueueCluster after) {
            }

            @Override
            public void onDelete(QueueCluster cluster, boolean finalStateUnknown) {
                metrics.forget(cluster.getMetadata().getNamespace(), cluster.getMetadata().getName(), cluster.getMetadata().getUid());
            }
        };
        if (watchedNamespaces.isEmpty()) {
            deletions.add(client.resources(QueueCluster.class).inAnyNamespace().inform(forgetDeleted));
        } else {
            watchedNamespaces.forEach(namespace ->
                deletions.add(client.resources(QueueCluster.class).inNamespace(namespace).inform(forgetDeleted)));
        }
    }

    /**
     * Ready: started, and every informer connected to the API server (its caches synced). A replica waiting for the
     * Lease is ready too: its informers run, it only does not reconcile; the Lease says which one acts.
     */
    public boolean ready() {
        return operator.getRuntimeInfo().isStarted() && operator.getRuntimeInfo().allEventSourcesAreHealthy();
    }

    @Override
    public void close() {
        deletions.forEach(SharedIndexInformer::close);
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
        OperatorEndpoints metrics = OperatorEndpoints.start("0.0.0.0", metricsPort, registry, operator::ready);
        operator.operator.installShutdownHook(Duration.ofSeconds(10));
        Runtime.getRuntime().addShutdownHook(new Thread(metrics::close, "metrics-shutdown"));
        operator.start();
    }
}
