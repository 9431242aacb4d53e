package io.queueenterprise.operator.model;

import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.queueenterprise.operator.api.QueueCluster;

/**
 * Per-node identities of a QueueCluster (issue 19 §2, docs/operator.md "Per-node identities"), pure: which identity
 * public key each replica is pinned to, given the pins so far ({@code status.replicas[].identityKey}), the keys the
 * nodes report in their admin status, and the rotation annotation; and the nodes' peer-identities ConfigMap rendered
 * from the pins. Trust on first report: the first key a replica reports is pinned; a later different one is a
 * {@link Mismatch}, never re-pinned, until {@link #ROTATE_ANNOTATION} names that replica. Nothing here talks to the
 * API server.
 */
public final class NodeIdentityModel {
    /** On the QueueCluster, naming one replica: its next reported key that differs from its pin replaces the pin. */
    public static final String ROTATE_ANNOTATION = "queue-enterprise.io/rotate-node";
    private static final int ED25519_PUBLIC_KEY_LENGTH = 32;

    private NodeIdentityModel() {
    }

    /**
     * @param replicas the cluster's replicas, in ordinal order
     * @param pinned   replica → pinned public key (base64), from the status the reconcile read
     * @param reported replica → the public key it reports now (reachable replicas of a node that reports one)
     * @param rotate   the value of {@link #ROTATE_ANNOTATION}, null when absent
     */
    public static Plan plan(List<String> replicas, Map<String, String> pinned, Map<String, String> reported, String rotate) {
        Map<String, String> pins = new LinkedHashMap<>();
        List<String> newlyPinned = new ArrayList<>();
        List<Mismatch> mismatches = new ArrayList<>();
        String rotated = null;
        String unknownRotation = rotate != null && !replicas.contains(rotate.strip()) ? rotate : null;
        String rotating = unknownRotation == null && rotate != null ? rotate.strip() : null;
        for (String replica : replicas) {
            String pin = pinned.get(replica);
            String key = reported.get(replica);
            if (key != null && !validKey(key)) {
                key = null;   // never pin what is not an Ed25519 public key: the nodes could not read the file
            }
            if (pin == null) {
                if (key != null) {
                    pins.put(replica, key);
                    newlyPinned.add(replica);
                    if (replica.equals(rotating)) {
                        rotated = replica;   // no pin to replace (lost with the status, or never made): done all the same
                    }
                }
            } else if (key == null || key.equals(pin)) {
                pins.put(replica, pin);
            } else if (replica.equals(rotating)) {
                pins.put(replica, key);
                rotated = replica;
            } else {
                pins.put(replica, pin);
                mismatches.add(new Mismatch(replica, fingerprint(pin), fingerprint(key)));
            }
        }
        return new Plan(pins, newlyPinned, mismatches, rotated, rotating, unknownRotation);
    }

    /** A node's identity fingerprint as the node prints it: the first four bytes of the public key in hex. */
    public static String fingerprint(String publicKey) {
        try {
            return HexFormat.of().formatHex(Base64.getDecoder().decode(publicKey), 0, 4);
        } catch (IllegalArgumentException | IndexOutOfBoundsException unreadable) {
            return "unreadable";
        }
    }

    static boolean validKey(String publicKey) {
        try {
            return Base64.getDecoder().decode(publicKey).length == ED25519_PUBLIC_KEY_LENGTH;
        } catch (IllegalArgumentException unreadable) {
            return false;
        }
    }

    /**
     * The nodes' peer identities: one {@code <replica> <public key>} line per pinned replica, in ordinal order; a
     * replica not seen yet is left out (its peers take it unpinned until it is).
     */
    public static ConfigMap peerIdentitiesConfigMap(QueueCluster cluster, Map<String, String> pins) {
        ClusterNames names = ClusterNames.of(cluster);
        StringBuilder lines = new StringBuilder("# node identities of ").append(names.cluster())
            .append(", pinned by the operator on each node's first report (status.replicas[].identityKey); do not edit\n");
        pins.forEach((replica, key) -> lines.append(replica).append(' ').append(key).append('\n'));
        Map<String, String> labels = names.selectorLabels();
        labels.put(ClusterNames.LABEL_COMPONENT, ClusterNames.NODE_IDENTITY_COMPONENT);
        labels.put(ClusterNames.LABEL_MANAGED_BY, ClusterNames.MANAGER);
        return new ConfigMapBuilder()
            .withNewMetadata().withName(names.nodeIdentitiesConfigMap()).withNamespace(names.namespace())
                .withLabels(labels).endMetadata()
            .addToData(NodePaths.PEER_IDENTITIES_KEY, lines.toString()).build();
    }

    /**
     * @param pins            replica → pinned key after this reconcile (the status records it)
     * @param newlyPinned     replicas pinned for the first time now
     * @param mismatches      replicas reporting a key other than their pin (pin kept)
     * @param rotated         the replica whose pin the rotation replaced now (remove the annotation), or null
     * @param rotating        the replica the annotation names (known), or null
     * @param unknownRotation the annotation's value when it names no replica of the cluster, or null
     */
    public record Plan(Map<String, String> pins, List<String> newlyPinned, List<Mismatch> mismatches, String rotated,
                       String rotating, String unknownRotation) {
        /** The annotation has done its work (pin replaced) or can never do it (no such replica): remove it. */
        public boolean removeAnnotation() {
            return rotated != null;
        }
    }

    /** {@code replica} reports a key (fingerprint {@code reported}) other than its pin (fingerprint {@code pinned}). */
    public record Mismatch(String replica, String pinned, String reported) {
        public String message() {
            return replica + " reports identity " + reported + " but is pinned to " + pinned + " (its peers refuse it;"
                + " if the key was replaced on purpose, annotate the QueueCluster " + ROTATE_ANNOTATION + "=" + replica + ")";
        }
    }
}
