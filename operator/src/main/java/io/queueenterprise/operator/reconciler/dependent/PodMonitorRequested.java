package io.queueenterprise.operator.reconciler.dependent;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.workflow.CRDPresentActivationCondition;
import io.queueenterprise.operator.api.QueueCluster;

/**
 * The PodMonitor is managed only when the QueueCluster asks for it and the Prometheus Operator's CRD is installed;
 * without the CRD the operator would otherwise fail to start its informer.
 */
public class PodMonitorRequested extends CRDPresentActivationCondition<GenericKubernetesResource, QueueCluster> {
    @Override
    public boolean isMet(DependentResource<GenericKubernetesResource, QueueCluster> dependentResource, QueueCluster cluster,
                         Context<QueueCluster> context) {
        return cluster.getSpec().getMonitoring() != null && Boolean.TRUE.equals(cluster.getSpec().getMonitoring().getPodMonitor())
            && super.isMet(dependentResource, cluster, context);
    }
}
