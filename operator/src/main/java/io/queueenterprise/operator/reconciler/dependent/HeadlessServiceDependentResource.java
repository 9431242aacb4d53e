package io.queueenterprise.operator.reconciler.dependent;

import io.fabric8.kubernetes.api.model.Service;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.queueenterprise.operator.api.QueueCluster;

/** Applies the headless Service that gives replicas stable DNS names (operator.model decides what it holds). */
public class HeadlessServiceDependentResource extends CRUDKubernetesDependentResource<Service, QueueCluster> {
    public HeadlessServiceDependentResource() {
        super(Service.class);
    }

    @Override
    protected Service desired(QueueCluster cluster, Context<QueueCluster> context) {
        return ModelSupport.model(cluster).headlessService();
    }
}
