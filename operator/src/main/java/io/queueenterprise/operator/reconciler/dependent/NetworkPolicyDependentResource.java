package io.queueenterprise.operator.reconciler.dependent;

import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.queueenterprise.operator.api.QueueCluster;

/** Applies the NetworkPolicy admitting replicas, the operator and authorised clients only (operator.model decides what it holds). */
public class NetworkPolicyDependentResource extends CRUDKubernetesDependentResource<NetworkPolicy, QueueCluster> {
    public NetworkPolicyDependentResource() {
        super(NetworkPolicy.class);
    }

    @Override
    protected NetworkPolicy desired(QueueCluster cluster, Context<QueueCluster> context) {
        return ModelSupport.model(cluster).networkPolicy();
    }
}
