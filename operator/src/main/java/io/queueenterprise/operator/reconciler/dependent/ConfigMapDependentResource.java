package io.queueenterprise.operator.reconciler.dependent;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.queueenterprise.operator.api.QueueCluster;

/** Applies the node-configuration documents, one per replica (operator.model decides what it holds). */
public class ConfigMapDependentResource extends CRUDKubernetesDependentResource<ConfigMap, QueueCluster> {
    public ConfigMapDependentResource() {
        super(ConfigMap.class);
    }

    @Override
    protected ConfigMap desired(QueueCluster cluster, Context<QueueCluster> context) {
        return ModelSupport.model(cluster).configMap();
    }
}
