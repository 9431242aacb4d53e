package io.queueenterprise.operator.model;

import java.util.LinkedHashMap;
import java.util.Map;

import io.queueenterprise.operator.api.QueueCluster;

/** Names and labels of everything the operator creates for one QueueCluster; one place, so they never drift. */
public final class ClusterNames {
    public static final String LABEL_NAME = "app.kubernetes.io/name";
    public static final String LABEL_INSTANCE = "app.kubernetes.io/instance";
    public static final String LABEL_COMPONENT = "app.kubernetes.io/component";
    public static final String LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
    public static final String APP = "queue-enterprise";
    /** On a client's key-pair Secret: the client's name. */
    public static final String LABEL_CLIENT = "queue-enterprise.io/client";
    public static final String CLIENT_IDENTITY_COMPONENT = "client-identity";
    public static final String NODE_IDENTITY_COMPONENT = "node-identity";
    public static final String MANAGER = "queue-enterprise-operator";
    /**
     * Carried by the nodes of a tuned pool, whose kubelet runs {@code cpuManagerPolicy: static} (docs/operator.md):
     * pinned replicas are scheduled only there, and the Pinned condition looks for such nodes.
     */
    public static final String TUNED_NODE_LABEL = "queue-enterprise.io/cpu-manager-policy";
    public static final String TUNED_NODE_VALUE = "static";

    private final String cluster;
    private final String namespace;

    public ClusterNames(String cluster, String namespace) {
        this.cluster = cluster;
        this.namespace = namespace;
    }

    public static ClusterNames of(QueueCluster cluster) {
        return new ClusterNames(cluster.getMetadata().getName(), cluster.getMetadata().getNamespace());
    }

    public String cluster() {
        return cluster;
    }

    public String namespace() {
        return namespace;
    }

    public String statefulSet() {
        return cluster;
    }

    public String headlessService() {
        return cluster + "-nodes";
    }

    public String configMap() {
        return cluster + "-config";
    }

    public String adminTokenSecret() {
        return cluster + "-admin-token";
    }

    public String peerCredentialSecret() {
        return cluster + "-peer-credential";
    }

    /** The Secret holding remote client {@code client}'s key pair (its application mounts it). */
    public String clientSecret(String client) {
        return cluster + "-client-" + client;
    }

    /** The ConfigMap of {@code <name> <public key>} lines the nodes take clients from. */
    public String authorisedClientsConfigMap() {
        return cluster + "-authorised-clients";
    }

    /** The ConfigMap of {@code <replica> <public key>} lines: the nodes' pinned peer identities. */
    public String nodeIdentitiesConfigMap() {
        return cluster + "-node-identities";
    }

    /** Labels of client {@code client}'s key-pair Secret; {@link #clientIdentityLabels()} selects them all. */
    public Map<String, String> clientIdentityLabels(String client) {
        Map<String, String> labels = clientIdentityLabels();
        labels.put(LABEL_CLIENT, client);
        return labels;
    }

    /** Selects this cluster's client key-pair Secrets. */
    public Map<String, String> clientIdentityLabels() {
        Map<String, String> labels = selectorLabels();
        labels.put(LABEL_COMPONENT, CLIENT_IDENTITY_COMPONENT);
        labels.put(LABEL_MANAGED_BY, MANAGER);
        return labels;
    }

    /** Pod N is replica N; its name is also its node id in the node-configuration document. */
    public String replica(int ordinal) {
        return cluster + "-" + ordinal;
    }

    public String configKey(int ordinal) {
        return replica(ordinal) + ".yaml";
    }

    /** A replica's stable DNS name through the headless Service (works for host-network pods too). */
    public String replicaHost(int ordinal, String clusterDomain) {
        return replica(ordinal) + "." + headlessService() + "." + namespace + ".svc." + clusterDomain;
    }

    /** Selects this cluster's node pods. */
    public Map<String, String> selectorLabels() {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(LABEL_NAME, APP);
        labels.put(LABEL_INSTANCE, cluster);
        return labels;
    }

    public Map<String, String> labels() {
        Map<String, String> labels = selectorLabels();
        labels.put(LABEL_COMPONENT, "node");
        labels.put(LABEL_MANAGED_BY, MANAGER);
        return labels;
    }
}
