package io.queueenterprise.operator.reconciler.dependent;

import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.queueenterprise.operator.api.QueueCluster;

/** Applies the StatefulSet: pod N is replica N (operator.model decides what it holds). */
public class StatefulSetDependentResource extends CRUDKubernetesDependentResource<StatefulSet, QueueCluster> {
    public StatefulSetDependentResource() {
        super(StatefulSet.class);
    }

    @Override
    protected StatefulSet desired(QueueCluster cluster, Context<QueueCluster> context) {
        return ModelSupport.model(cluster).statefulSet();
    }
}
