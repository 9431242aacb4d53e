package io.queueenterprise.operator.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.queueenterprise.crypto.IdentityKey;
import io.queueenterprise.operator.api.ClientIdentity;
import io.queueenterprise.operator.api.QueueCluster;

/** Per-client identities as the operator renders them (docs/remote-clients.md, "Per-client identity"): no cluster. */
@org.junit.jupiter.api.Tag("unit")
class ClientIdentityModelTest {
    private static final OperatorSettings SETTINGS = OperatorSettings.defaults();
    private static final SecureRandom RANDOM = new SecureRandom();

    private static QueueCluster withClients(String... clients) {
        QueueCluster cluster = TestClusters.threeReplicas();   // serves remote clients (a client-credential Secret)
        List<ClientIdentity> listed = new ArrayList<>();
        for (String client : clients) {
            listed.add(new ClientIdentity(client));
        }
        cluster.getSpec().setClients(listed);
        return cluster;
    }

    private static String text(Secret secret, String key) {
        return new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.US_ASCII);
    }

    @Test
    void aClientSecretHoldsTheKeyFileTheRemoteClientReadsAndItsPublicKey(@TempDir Path dir) throws Exception {
        Secret secret = new ClientIdentityModel(withClients("billing")).clientSecret("billing", RANDOM);
        assertEquals("replica-client-billing", secret.getMetadata().getName());
        assertEquals("trading", secret.getMetadata().getNamespace());
        assertEquals("billing", secret.getMetadata().getLabels().get(ClusterNames.LABEL_CLIENT));
        assertEquals(ClusterNames.CLIENT_IDENTITY_COMPONENT, secret.getMetadata().getLabels().get(ClusterNames.LABEL_COMPONENT));
        assertEquals("replica", secret.getMetadata().getLabels().get(ClusterNames.LABEL_INSTANCE));

        // the file as the Secret's volume holds it, read as RemoteQueue.Builder.identity(name, keyFile) reads it
        Path keyFile = Files.createFile(dir.resolve(ClientIdentityModel.PRIVATE_KEY),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("r--------")));
        Files.write(keyFile, Base64.getDecoder().decode(secret.getData().get(ClientIdentityModel.PRIVATE_KEY)));
        try (IdentityKey key = IdentityKey.load(keyFile, "client identity key")) {
            assertEquals(key.publicKeyText(), text(secret, ClientIdentityModel.PUBLIC_KEY),
                "the public key named is the private key's");
            assertEquals(key.publicKeyText(), ClientIdentityModel.publicKey(secret));
        }
        assertTrue(text(secret, ClientIdentityModel.PRIVATE_KEY).matches("[0-9a-f]{64}"), "hex seed, as `qe identity` writes it");
    }

    @Test
    void everyKeyPairIsNew() {
        ClientIdentityModel model = new ClientIdentityModel(withClients("billing"));
        assertNotEquals(model.clientSecret("billing", RANDOM).getData(), model.clientSecret("billing", RANDOM).getData());
    }

    @Test
    void theAuthorisedClientsFileNamesEachListedClientInSpecOrder() {
        ClientIdentityModel model = new ClientIdentityModel(withClients("risk", "billing"));
        Map<String, String> keys = new LinkedHashMap<>();
        keys.put("billing", ClientIdentityModel.publicKey(model.clientSecret("billing", RANDOM)));
        keys.put("risk", ClientIdentityModel.publicKey(model.clientSecret("risk", RANDOM)));
        keys.put("gone", ClientIdentityModel.publicKey(model.clientSecret("gone", RANDOM)));   // not listed: no line
        ConfigMap map = model.authorisedClientsConfigMap(keys);
        assertEquals("replica-authorised-clients", map.getMetadata().getName());
        List<String> lines = map.getData().get(NodePaths.AUTHORISED_CLIENTS_KEY).lines()
            .filter(line -> !line.startsWith("#")).toList();
        assertEquals(List.of("risk " + keys.get("risk"), "billing " + keys.get("billing")), lines);
        for (String line : lines) {
            IdentityKey.parsePublicKey(line.split(" ")[1]);   // what the node's reader accepts
        }
    }

    @Test
    void theNodesMountTheAuthorisedClientsAsADirectoryExactlyWhenClientsAreListed() {
        StatefulSet set = new QueueClusterModel(withClients("billing"), SETTINGS).statefulSet();
        Volume volume = set.getSpec().getTemplate().getSpec().getVolumes().stream()
            .filter(v -> v.getConfigMap() != null && "replica-authorised-clients".equals(v.getConfigMap().getName()))
            .findFirst().orElseThrow(() -> new AssertionError("no volume of the authorised-clients ConfigMap"));
        VolumeMount mount = set.getSpec().getTemplate().getSpec().getContainers().get(0).getVolumeMounts().stream()
            .filter(m -> m.getName().equals(volume.getName())).findFirst().orElseThrow();
        assertEquals(NodePaths.AUTHORISED_CLIENTS_DIRECTORY, mount.getMountPath());
        assertNull(mount.getSubPath(), "a subPath mount is never updated by the kubelet: revocation would need a restart");
        assertTrue(mount.getReadOnly());
        NodeConfigModel.configMapData(withClients("billing"), SETTINGS).values().forEach(document -> assertTrue(
            document.contains("\nauthorisedClientsFile: " + NodePaths.AUTHORISED_CLIENTS_FILE + "\n"), document));

        // an empty list names no client: the nodes take none (not everyone)
        NodeConfigModel.configMapData(withClients(), SETTINGS).values().forEach(document -> assertTrue(
            document.contains("\nauthorisedClientsFile: " + NodePaths.AUTHORISED_CLIENTS_FILE + "\n"), document));

        QueueCluster unnamed = TestClusters.threeReplicas();   // absent: any client proving the credential
        assertNoAuthorisedClients(unnamed);
        QueueCluster notServing = withClients("billing");      // the CRD refuses it; the node would too
        notServing.getSpec().setClientCredentialSecret(null);
        assertNoAuthorisedClients(notServing);
        assertTrue(new ClientIdentityModel(notServing).plan(List.of()).create().isEmpty());
    }

    private static void assertNoAuthorisedClients(QueueCluster cluster) {
        StatefulSet set = new QueueClusterModel(cluster, SETTINGS).statefulSet();
        assertTrue(set.getSpec().getTemplate().getSpec().getVolumes().stream().noneMatch(v -> v.getName().equals("authorised-clients")));
        assertTrue(set.getSpec().getTemplate().getSpec().getContainers().get(0).getVolumeMounts().stream()
            .noneMatch(m -> m.getMountPath().equals(NodePaths.AUTHORISED_CLIENTS_DIRECTORY)));
        NodeConfigModel.configMapData(cluster, SETTINGS).values().forEach(document ->
            assertFalse(document.contains("authorisedClientsFile"), document));
    }

    @Test
    void addingOrRemovingAClientRestartsNoPod() {
        String before = configHash(withClients("billing"));
        assertEquals(before, configHash(withClients("billing", "risk")));
        assertEquals(before, configHash(withClients()));
    }

    private static String configHash(QueueCluster cluster) {
        return new QueueClusterModel(cluster, SETTINGS).statefulSet().getSpec().getTemplate().getMetadata().getAnnotations()
            .get(QueueClusterModel.CONFIG_HASH_ANNOTATION);
    }

    @Test
    void missingSecretsAreCreatedExistingOnesKeptRemovedOnesDeleted() {
        ClientIdentityModel before = new ClientIdentityModel(withClients("billing", "risk"));
        Secret billing = before.clientSecret("billing", RANDOM);
        Secret risk = before.clientSecret("risk", RANDOM);

        ClientIdentityModel.Plan first = before.plan(List.of());
        assertEquals(List.of("billing", "risk"), first.create());
        assertTrue(first.rotate().isEmpty() && first.delete().isEmpty() && first.kept().isEmpty());

        ClientIdentityModel.Plan steady = before.plan(List.of(billing, risk));
        assertTrue(steady.create().isEmpty() && steady.rotate().isEmpty() && steady.delete().isEmpty(), "never overwritten");
        assertEquals(Map.of("billing", ClientIdentityModel.publicKey(billing), "risk", ClientIdentityModel.publicKey(risk)),
            steady.kept());

        ClientIdentityModel after = new ClientIdentityModel(withClients("risk"));
        ClientIdentityModel.Plan removal = after.plan(List.of(billing, risk));
        assertEquals(List.of("replica-client-billing"), removal.delete());
        assertEquals(Map.of("risk", ClientIdentityModel.publicKey(risk)), removal.kept());
        String lines = after.authorisedClientsConfigMap(removal.kept()).getData().get(NodePaths.AUTHORISED_CLIENTS_KEY);
        assertFalse(lines.contains("billing"), "the removed client's line is gone: " + lines);
        assertTrue(lines.contains("risk " + ClientIdentityModel.publicKey(risk)), lines);
    }

    @Test
    void anAnnotatedSecretIsRotated() {
        ClientIdentityModel model = new ClientIdentityModel(withClients("billing", "risk"));
        Secret billing = model.clientSecret("billing", RANDOM);
        billing.getMetadata().setAnnotations(Map.of(ClientIdentityModel.ROTATE_ANNOTATION, "true"));
        Secret risk = model.clientSecret("risk", RANDOM);
        ClientIdentityModel.Plan plan = model.plan(List.of(billing, risk));
        assertEquals(List.of("billing"), plan.rotate());
        assertTrue(plan.create().isEmpty() && plan.delete().isEmpty());
        assertEquals(Map.of("risk", ClientIdentityModel.publicKey(risk)), plan.kept(), "the others untouched");
    }
}
