package io.queueenterprise.operator.reconciler.dependent;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.GroupVersionKind;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.GenericKubernetesDependentResource;
import io.queueenterprise.operator.api.QueueCluster;

/** A Prometheus Operator PodMonitor, when asked for and when its CRD exists (see {@link PodMonitorRequested}). */
public class PodMonitorDependentResource extends GenericKubernetesDependentResource<QueueCluster> {
    public static final GroupVersionKind POD_MONITOR = new GroupVersionKind("monitoring.coreos.com", "v1", "PodMonitor");

    public PodMonitorDependentResource() {
        super(POD_MONITOR);
    }

    @Override
    protected GenericKubernetesResource desired(QueueCluster cluster, Context<QueueCluster> context) {
        return ModelSupport.model(cluster).podMonitor();
    }
}
