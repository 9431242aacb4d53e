package io.queueenterprise.operator.model;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;

import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterSpec;
import io.queueenterprise.operator.api.QueueDefinition;

/** QueueCluster → one node-configuration document per replica (pure). */
public final class NodeConfigModel {
    /** Both listen on all of the pod's addresses; the NetworkPolicy decides who reaches them. */
    static final String BIND_ALL = "0.0.0.0";
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
        .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
        .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
        .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR));

    private NodeConfigModel() {
    }

    public static NodeConfigDocument document(QueueCluster cluster, int ordinal, OperatorSettings settings) {
        ClusterNames names = ClusterNames.of(cluster);
        QueueClusterSpec spec = cluster.getSpec();
        // the node serves remote clients only with both a client port and the client credential (its reader
        // refuses one without the other): both come from the QueueCluster's client-credential Secret
        boolean servesClients = spec.getClientCredentialSecret() != null;
        // remote appends only with the queues' write keys (the CRD refuses writeKeySecret without the client credential)
        boolean takesRemoteAppends = servesClients && spec.getWriteKeySecret() != null;
        // clients listed (even none): the node takes only those named in the authorised-clients ConfigMap
        boolean namesClients = servesClients && spec.getClients() != null;
        List<NodeConfigDocument.Peer> peers = new ArrayList<>();
        for (int replica = 0; replica < spec.getReplicas(); replica++) {
            peers.add(new NodeConfigDocument.Peer(names.replica(replica), names.replicaHost(replica, settings.clusterDomain()),
                NodePaths.REPLICATION_PORT, servesClients ? NodePaths.CLIENT_PORT : null));
        }
        List<NodeConfigDocument.Queue> queues = new ArrayList<>();
        for (QueueDefinition queue : spec.getQueues()) {
            queues.add(queue(queue, spec));
        }
        return new NodeConfigDocument(NodeConfigDocument.SCHEMA_VERSION, names.replica(ordinal), NodePaths.DATA_DIRECTORY,
            // identities: the key file on the data volume, drawn there at first start; the pins in their own mounted
            // file, never peers[].identityKey, so that pinning leaves the documents and the config hash as they are
            peers, NodePaths.PEER_CREDENTIAL_FILE, NodePaths.IDENTITY_KEY_FILE, true, NodePaths.PEER_IDENTITIES_FILE,
            servesClients ? NodePaths.CLIENT_CREDENTIAL_FILE : null,
            takesRemoteAppends ? NodePaths.WRITE_KEY_DIRECTORY : null,
            namesClients ? NodePaths.AUTHORISED_CLIENTS_FILE : null, queues,
            new NodeConfigDocument.Admin(BIND_ALL, NodePaths.ADMIN_PORT, NodePaths.ADMIN_TOKEN_FILE),
            new NodeConfigDocument.Metrics(BIND_ALL, NodePaths.METRICS_PORT), spec.getIdleStrategy().name());
    }

    private static NodeConfigDocument.Queue queue(QueueDefinition queue, QueueClusterSpec spec) {
        String ackMode = (queue.getAckMode() != null ? queue.getAckMode() : spec.getAckMode()).name();
        NodeConfigDocument.Retention retention = queue.getRetention() == null ? null
            : new NodeConfigDocument.Retention(queue.getRetention().getMaxAge(), queue.getRetention().getMaxBytes());
        return new NodeConfigDocument.Queue(queue.getName(), queue.getRollCycle().name(), queue.getEncryption().name(),
            ackMode, queue.getAckTimeout(), retention);
    }

    /** The ConfigMap's data: {@code <pod name>.yaml} → that replica's document. */
    public static Map<String, String> configMapData(QueueCluster cluster, OperatorSettings settings) {
        ClusterNames names = ClusterNames.of(cluster);
        Map<String, String> data = new LinkedHashMap<>();
        for (int replica = 0; replica < cluster.getSpec().getReplicas(); replica++) {
            data.put(names.configKey(replica), render(document(cluster, replica, settings)));
        }
        return data;
    }

    public static String render(NodeConfigDocument document) {
        try {
            return "# Queue Enterprise node configuration (schema version 1), rendered by the operator; do not edit.\n"
                + YAML.writeValueAsString(document);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot render a node-configuration document: " + e.getOriginalMessage(), e);
        }
    }
}
