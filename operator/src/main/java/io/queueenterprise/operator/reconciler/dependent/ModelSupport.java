package io.queueenterprise.operator.reconciler.dependent;

import java.util.concurrent.atomic.AtomicReference;

import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.model.OperatorSettings;
import io.queueenterprise.operator.model.QueueClusterModel;

/**
 * The operator's settings, as the dependent resources (which JOSDK instantiates itself) see them: set once at start
 * by whoever starts the operator, read from the environment otherwise.
 */
public final class ModelSupport {
    private static final AtomicReference<OperatorSettings> SETTINGS =
        new AtomicReference<>(OperatorSettings.fromEnvironment(System.getenv()));

    private ModelSupport() {
    }

    public static void use(OperatorSettings settings) {
        SETTINGS.set(settings);
    }

    public static OperatorSettings settings() {
        return SETTINGS.get();
    }

    public static QueueClusterModel model(QueueCluster cluster) {
        return new QueueClusterModel(cluster, SETTINGS.get());
    }
}
