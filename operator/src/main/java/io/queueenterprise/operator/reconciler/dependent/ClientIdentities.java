package io.queueenterprise.operator.reconciler.dependent;

import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.LinkedHashMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.model.ClientIdentityModel;
import io.queueenterprise.operator.model.ClusterNames;

/**
 * Applies {@link ClientIdentityModel}'s plan, from the reconciler itself: one Secret per listed client (a set that
 * changes with the spec, which JOSDK's one-resource dependents do not express) and the authorised-clients ConfigMap
 * built from their public keys. A Secret is created once and replaced only when annotated
 * {@link ClientIdentityModel#ROTATE_ANNOTATION}; every one carries the QueueCluster as owner, so deleting the
 * QueueCluster deletes them.
 */
public final class ClientIdentities {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Logger LOG = LoggerFactory.getLogger(ClientIdentities.class);

    private ClientIdentities() {
    }

    public static void reconcile(QueueCluster cluster, KubernetesClient client) {
        ClusterNames names = ClusterNames.of(cluster);
        ClientIdentityModel model = new ClientIdentityModel(cluster);
        var secrets = client.secrets().inNamespace(names.namespace());
        List<Secret> existing = secrets.withLabels(names.clientIdentityLabels()).list().getItems();
        ClientIdentityModel.Plan plan = model.plan(existing);
        Map<String, String> keys = new LinkedHashMap<>(plan.kept());
        for (String name : plan.create()) {
            Secret secret = owned(model.clientSecret(name, RANDOM), cluster);
            secrets.resource(secret).create();
            keys.put(name, ClientIdentityModel.publicKey(secret));
            LOG.info("{}/{}: client {}: key pair created in Secret {}", names.namespace(), names.cluster(), name,
                secret.getMetadata().getName());
        }
        for (String name : plan.rotate()) {
            Secret fresh = model.clientSecret(name, RANDOM);
            secrets.withName(names.clientSecret(name)).edit(secret -> {
                secret.setData(fresh.getData());
                secret.setStringData(null);
                if (secret.getMetadata().getAnnotations() != null) {
                    secret.getMetadata().getAnnotations().remove(ClientIdentityModel.ROTATE_ANNOTATION);
                }
                return secret;
            });
            keys.put(name, ClientIdentityModel.publicKey(fresh));
            LOG.info("{}/{}: client {}: key pair rotated in Secret {}", names.namespace(), names.cluster(), name,
                names.clientSecret(name));
        }
        var configMaps = client.configMaps().inNamespace(names.namespace());
        if (model.namesClients()) {
            // before the deletions: a removed client's line goes, so the nodes refuse it before its Secret is gone
            ConfigMap authorised = owned(model.authorisedClientsConfigMap(keys), cluster);
            configMaps.resource(authorised).forceConflicts().serverSideApply();
        } else {
            configMaps.withName(names.authorisedClientsConfigMap()).delete();
        }
        for (String secret : plan.delete()) {
            secrets.withName(secret).delete();
            LOG.info("{}/{}: Secret {} deleted: its client is no longer listed", names.namespace(), names.cluster(), secret);
        }
    }

    private static <T extends HasMetadata> T owned(T resource, QueueCluster cluster) {
        resource.getMetadata().setOwnerReferences(List.of(new OwnerReferenceBuilder()
            .withApiVersion(cluster.getApiVersion()).withKind(cluster.getKind()).withName(cluster.getMetadata().getName())
            .withUid(cluster.getMetadata().getUid()).withController(true).withBlockOwnerDeletion(false).build()));
        return resource;
    }
}
