package io.queueenterprise.operator.model;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.interfaces.EdECPrivateKey;
import java.security.spec.NamedParameterSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.queueenterprise.operator.api.ClientIdentity;
import io.queueenterprise.operator.api.QueueCluster;

/**
 * Per-client identities of a QueueCluster (docs/remote-clients.md, "Per-client identity"), pure: each listed client's
 * key-pair Secret, the nodes' authorised-clients ConfigMap, and what to create, rotate and delete given the Secrets
 * that exist ({@link #plan}). The reconciler applies the plan; nothing here talks to the API server.
 */
public final class ClientIdentityModel {
    /** The Secret's entry holding the private key: the Ed25519 seed in hex, as {@code qe identity} writes it. */
    public static final String PRIVATE_KEY = "key";
    /** The Secret's entry holding the public key (base64 of 32 bytes), as the authorised-clients line names it. */
    public static final String PUBLIC_KEY = "public";
    /** Set (any value) on a client's Secret: the operator replaces its key pair, then removes the annotation. */
    public static final String ROTATE_ANNOTATION = "queue-enterprise.io/rotate";
    /** The X.509 SubjectPublicKeyInfo of an Ed25519 key ends with the 32-byte key itself (RFC 8410). */
    private static final int ED25519_PUBLIC_KEY_LENGTH = 32;

    private final ClusterNames names;
    private final List<String> clients;

    public ClientIdentityModel(QueueCluster cluster) {
        this.names = ClusterNames.of(cluster);
        List<ClientIdentity> listed = cluster.getSpec().getClients();
        // clients only where the cluster serves them (the CRD refuses clients without the client credential)
        this.clients = listed == null || cluster.getSpec().getClientCredentialSecret() == null ? null
            : listed.stream().map(ClientIdentity::getName).toList();
    }

    /** Whether the nodes take only named clients (an empty list: none); false when any credential holder is taken. */
    public boolean namesClients() {
        return clients != null;
    }

    public List<String> clients() {
        return clients == null ? List.of() : clients;
    }

    /** A fresh key pair for {@code client} in its Secret (entries {@link #PRIVATE_KEY}, {@link #PUBLIC_KEY}). */
    public Secret clientSecret(String client, SecureRandom random) {
        byte[] seed = null;
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("Ed25519");
            generator.initialize(NamedParameterSpec.ED25519, random);
            KeyPair pair = generator.generateKeyPair();
            seed = ((EdECPrivateKey) pair.getPrivate()).getBytes().orElseThrow();
            byte[] encoded = pair.getPublic().getEncoded();
            byte[] publicKey = Arrays.copyOfRange(encoded, encoded.length - ED25519_PUBLIC_KEY_LENGTH, encoded.length);
            Base64.Encoder base64 = Base64.getEncoder();
            return new SecretBuilder()
                .withNewMetadata().withName(names.clientSecret(client)).withNamespace(names.namespace())
                    .withLabels(names.clientIdentityLabels(client)).endMetadata()
                .withType("Opaque")
                .addToData(PRIVATE_KEY, base64.encodeToString(HexFormat.of().formatHex(seed).getBytes(StandardCharsets.US_ASCII)))
                .addToData(PUBLIC_KEY, base64.encodeToString(base64.encodeToString(publicKey).getBytes(StandardCharsets.US_ASCII)))
                .build();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 is required of every JDK since 15", e);
        } finally {
            if (seed != null) {
                Arrays.fill(seed, (byte) 0);
            }
        }
    }

    /** The public key a client's Secret holds (base64 text), or null when it holds none. */
    public static String publicKey(Secret secret) {
        String data = secret.getData() == null ? null : secret.getData().get(PUBLIC_KEY);
        return data == null ? null : new String(Base64.getDecoder().decode(data), StandardCharsets.US_ASCII).strip();
    }

    /**
     * The nodes' authorised clients: one {@code <name> <public key>} line per listed client whose key is known, in the
     * order of the spec. A client without a key yet is left out (refused until its Secret exists).
     */
    public ConfigMap authorisedClientsConfigMap(Map<String, String> publicKeys) {
        StringBuilder lines = new StringBuilder("# authorised remote clients of ").append(names.cluster())
            .append(", rendered by the operator from spec.clients; do not edit\n");
        for (String client : clients()) {
            String key = publicKeys.get(client);
            if (key != null) {
                lines.append(client).append(' ').append(key).append('\n');
            }
        }
        Map<String, String> labels = names.selectorLabels();
        labels.put(ClusterNames.LABEL_COMPONENT, ClusterNames.CLIENT_IDENTITY_COMPONENT);
        labels.put(ClusterNames.LABEL_MANAGED_BY, ClusterNames.MANAGER);
        return new ConfigMapBuilder()
            .withNewMetadata().withName(names.authorisedClientsConfigMap()).withNamespace(names.namespace())
                .withLabels(labels).endMetadata()
            .addToData(NodePaths.AUTHORISED_CLIENTS_KEY, lines.toString()).build();
    }

    /**
     * What to do given the client Secrets that exist (those labelled as this cluster's client identities): create the
     * missing, rotate those annotated {@link #ROTATE_ANNOTATION}, delete those of clients no longer listed, and the
     * public keys of the ones kept as they are.
     */
    public Plan plan(List<Secret> existing) {
        Map<String, Secret> byClient = new LinkedHashMap<>();
        for (Secret secret : existing) {
            String client = secret.getMetadata().getLabels() == null ? null
                : secret.getMetadata().getLabels().get(ClusterNames.LABEL_CLIENT);
            if (client != null) {
                byClient.put(client, secret);
            }
        }
        List<String> create = new ArrayList<>();
        List<String> rotate = new ArrayList<>();
        Map<String, String> kept = new LinkedHashMap<>();
        for (String client : clients()) {
            Secret secret = byClient.get(client);
            String key = secret == null ? null : publicKey(secret);
            if (secret == null) {
                create.add(client);
            } else if (key == null || rotationRequested(secret)) {
                rotate.add(client);
            } else {
                kept.put(client, key);
            }
        }
        List<String> delete = new ArrayList<>();
        for (String client : byClient.keySet()) {
            if (!clients().contains(client)) {
                delete.add(byClient.get(client).getMetadata().getName());
            }
        }
        return new Plan(create, rotate, delete, kept);
    }

    private static boolean rotationRequested(Secret secret) {
        Map<String, String> annotations = secret.getMetadata().getAnnotations();
        return annotations != null && annotations.containsKey(ROTATE_ANNOTATION);
    }

    /**
     * @param create  clients without a Secret: a new key pair each
     * @param rotate  clients whose Secret asks for a new key pair (or holds no public key): replaced in place
     * @param delete  Secrets (by name) of clients no longer listed
     * @param kept    public keys of the clients whose Secrets stay as they are
     */
    public record Plan(List<String> create, List<String> rotate, List<String> delete, Map<String, String> kept) {
    }
}
