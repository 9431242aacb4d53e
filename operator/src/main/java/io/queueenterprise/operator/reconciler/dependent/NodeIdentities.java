package io.queueenterprise.operator.reconciler.dependent;

import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.model.ClusterNames;
import io.queueenterprise.operator.model.NodeIdentityModel;

/**
 * Applies {@link NodeIdentityModel}'s plan, from the reconciler itself (the pins come from the nodes' reports, which
 * only the reconcile reads): the node-identities ConfigMap the nodes reload their peers' pins from, and the removal of
 * {@link NodeIdentityModel#ROTATE_ANNOTATION} once its rotation is done. The ConfigMap carries the QueueCluster as
 * owner, so deleting the QueueCluster deletes it.
 */
public final class NodeIdentities {
    private static final Logger LOG = LoggerFactory.getLogger(NodeIdentities.class);

    private NodeIdentities() {
    }

    public static void reconcile(QueueCluster cluster, NodeIdentityModel.Plan plan, KubernetesClient client) {
        ClusterNames names = ClusterNames.of(cluster);
        ConfigMap pins = NodeIdentityModel.peerIdentitiesConfigMap(cluster, plan.pins());
        pins.getMetadata().setOwnerReferences(List.of(new OwnerReferenceBuilder()
            .withApiVersion(cluster.getApiVersion()).withKind(cluster.getKind()).withName(cluster.getMetadata().getName())
            .withUid(cluster.getMetadata().getUid()).withController(true).withBlockOwnerDeletion(false).build()));
        client.configMaps().inNamespace(names.namespace()).resource(pins).forceConflicts().serverSideApply();
        for (String replica : plan.newlyPinned()) {
            LOG.info("{}/{}: {} pinned to identity {} (first report)", names.namespace(), names.cluster(), replica,
                NodeIdentityModel.fingerprint(plan.pins().get(replica)));
        }
        for (NodeIdentityModel.Mismatch mismatch : plan.mismatches()) {
            LOG.warn("{}/{}: {}", names.namespace(), names.cluster(), mismatch.message());
        }
        if (plan.removeAnnotation()) {
            LOG.info("{}/{}: {} re-pinned to identity {} as {} asked; removing the annotation", names.namespace(),
                names.cluster(), plan.rotated(), NodeIdentityModel.fingerprint(plan.pins().get(plan.rotated())),
                NodeIdentityModel.ROTATE_ANNOTATION);
            QueueCluster edited = client.resources(QueueCluster.class).inNamespace(names.namespace()).withName(names.cluster())
                .edit(current -> {
                    if (current.getMetadata().getAnnotations() != null) {
                        current.getMetadata().getAnnotations().remove(NodeIdentityModel.ROTATE_ANNOTATION);
                    }
                    return current;
                });
            // the status patch this reconcile ends with carries the resource's version: the version read at its start
            // is stale now, and the API server refused that patch ("the object has been modified"), losing the new
            // pin while the annotation was already gone (NodeInPodsIT's rotation: a mismatch for ever)
            cluster.getMetadata().setResourceVersion(edited.getMetadata().getResourceVersion());
            if (cluster.getMetadata().getAnnotations() != null) {
                cluster.getMetadata().getAnnotations().remove(NodeIdentityModel.ROTATE_ANNOTATION);
            }
        }
    }
}
