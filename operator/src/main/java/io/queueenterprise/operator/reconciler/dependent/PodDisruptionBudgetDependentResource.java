package io.queueenterprise.operator.reconciler.dependent;

import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.queueenterprise.operator.api.QueueCluster;

/** Applies the PodDisruptionBudget that keeps a majority through voluntary disruptions (operator.model decides what it holds). */
public class PodDisruptionBudgetDependentResource extends CRUDKubernetesDependentResource<PodDisruptionBudget, QueueCluster> {
    public PodDisruptionBudgetDependentResource() {
        super(PodDisruptionBudget.class);
    }

    @Override
    protected PodDisruptionBudget desired(QueueCluster cluster, Context<QueueCluster> context) {
        return ModelSupport.model(cluster).podDisruptionBudget();
    }
}
