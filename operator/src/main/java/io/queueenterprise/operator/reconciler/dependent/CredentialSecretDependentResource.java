package io.queueenterprise.operator.reconciler.dependent;

import java.security.SecureRandom;

import io.fabric8.kubernetes.api.model.Secret;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.GarbageCollected;
import io.javaoperatorsdk.operator.processing.dependent.Creator;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.model.ClusterNames;

/**
 * A random credential the operator owns: created once, never updated (a new value would lock the operator out of
 * the nodes, or the replicas out of each other, until every pod restarted), deleted with the QueueCluster.
 */
abstract class CredentialSecretDependentResource extends KubernetesDependentResource<Secret, QueueCluster>
    implements Creator<Secret, QueueCluster>, GarbageCollected<QueueCluster> {
    private static final SecureRandom RANDOM = new SecureRandom();

    CredentialSecretDependentResource() {
        super(Secret.class);
    }

    abstract String secretName(ClusterNames names);

    abstract String key();

    @Override
    protected Secret desired(QueueCluster cluster, Context<QueueCluster> context) {
        return ModelSupport.model(cluster).credentialSecret(secretName(ClusterNames.of(cluster)), key(), RANDOM);
    }

    /** Found by name: the desired state is random, it cannot identify the Secret. */
    @Override
    protected ResourceID targetSecondaryResourceID(QueueCluster cluster, Context<QueueCluster> context) {
        return new ResourceID(secretName(ClusterNames.of(cluster)), cluster.getMetadata().getNamespace());
    }
}
