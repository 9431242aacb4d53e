package io.queueenterprise.operator.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.GeneralSecurityException;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.spec.NamedParameterSpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.queueenterprise.crypto.IdentityKey;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.api.QueueClusterStatus;
import io.queueenterprise.operator.api.ReplicaStatus;

/** Per-node identities as the operator pins and renders them (issue 19 §2, docs/operator.md): no cluster. */
@org.junit.jupiter.api.Tag("unit")
class NodeIdentityModelTest {
    private static final OperatorSettings SETTINGS = OperatorSettings.defaults();
    private static final List<String> REPLICAS = List.of("replica-0", "replica-1", "replica-2");
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A real Ed25519 public key (not any 32 bytes: about half of those are no point of the curve). */
    private static String key() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("Ed25519");
            generator.initialize(NamedParameterSpec.ED25519, RANDOM);
            byte[] encoded = generator.generateKeyPair().getPublic().getEncoded();
            return Base64.getEncoder().encodeToString(Arrays.copyOfRange(encoded, encoded.length - 32, encoded.length));
        } catch (GeneralSecurityException e) {
            throw new AssertionError(e);
        }
    }

    private static Map<String, String> map(String... pairs) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.put(pairs[i], pairs[i + 1]);
        }
        return map;
    }

    @Test
    void theFirstReportedKeyIsPinnedAndAReplicaNotSeenStaysUnpinned() {
        String zero = key();
        String one = key();
        NodeIdentityModel.Plan first = NodeIdentityModel.plan(REPLICAS, Map.of(), map("replica-0", zero, "replica-1", one), null);
        assertEquals(map("replica-0", zero, "replica-1", one), first.pins());
        assertEquals(List.of("replica-0", "replica-1"), first.newlyPinned());
        assertTrue(first.mismatches().isEmpty());

        // next reconcile: pins from status, the same reports, replica-1 unreachable: nothing new, nothing lost
        NodeIdentityModel.Plan second = NodeIdentityModel.plan(REPLICAS, first.pins(), map("replica-0", zero), null);
        assertEquals(first.pins(), second.pins());
        assertTrue(second.newlyPinned().isEmpty());
        assertFalse(second.removeAnnotation());
    }

    @Test
    void aDifferentKeyIsAMismatchNamingBothFingerprintsAndIsNotPinned() {
        String pinned = key();
        String other = key();
        NodeIdentityModel.Plan plan = NodeIdentityModel.plan(REPLICAS, map("replica-1", pinned), map("replica-1", other), null);
        assertEquals(pinned, plan.pins().get("replica-1"), "trust on first report: a later key never replaces the pin by itself");
        assertEquals(List.of(new NodeIdentityModel.Mismatch("replica-1", NodeIdentityModel.fingerprint(pinned),
            NodeIdentityModel.fingerprint(other))), plan.mismatches());
        String message = plan.mismatches().get(0).message();
        assertTrue(message.contains("replica-1") && message.contains(NodeIdentityModel.fingerprint(pinned))
            && message.contains(NodeIdentityModel.fingerprint(other)), message);
        assertTrue(plan.newlyPinned().isEmpty());
    }

    @Test
    void aReportThatIsNoEd25519PublicKeyIsNeverPinned() {
        NodeIdentityModel.Plan plan = NodeIdentityModel.plan(REPLICAS, Map.of(), map("replica-0", "bm90LWEta2V5", "replica-1", "%%"), null);
        assertTrue(plan.pins().isEmpty());
    }

    @Test
    void theRotateAnnotationLetsTheNextDifferentKeyReplaceThePinOnce() {
        String old = key();
        String fresh = key();
        String other = key();
        // annotated before the key changed: waits, pin kept, annotation kept
        NodeIdentityModel.Plan waiting = NodeIdentityModel.plan(REPLICAS, map("replica-2", old), map("replica-2", old), "replica-2");
        assertEquals(old, waiting.pins().get("replica-2"));
        assertEquals("replica-2", waiting.rotating());
        assertNull(waiting.rotated());
        assertFalse(waiting.removeAnnotation());

        NodeIdentityModel.Plan rotated = NodeIdentityModel.plan(REPLICAS, map("replica-2", old, "replica-0", other),
            map("replica-2", fresh, "replica-0", other), "replica-2");
        assertEquals(fresh, rotated.pins().get("replica-2"));
        assertEquals("replica-2", rotated.rotated());
        assertTrue(rotated.removeAnnotation());
        assertTrue(rotated.mismatches().isEmpty());

        // a replica without a pin yet: its first report pins it, and the annotation has done its work
        NodeIdentityModel.Plan unpinned = NodeIdentityModel.plan(REPLICAS, Map.of(), map("replica-2", fresh), "replica-2");
        assertEquals(fresh, unpinned.pins().get("replica-2"));
        assertTrue(unpinned.removeAnnotation(), "an annotation that can never act again would stay for ever");

        // the annotation names replica-2 only: replica-0's changed key stays a mismatch
        NodeIdentityModel.Plan elsewhere = NodeIdentityModel.plan(REPLICAS, map("replica-0", other), map("replica-0", fresh), "replica-2");
        assertEquals(other, elsewhere.pins().get("replica-0"));
        assertEquals(1, elsewhere.mismatches().size());
    }

    @Test
    void aRotateAnnotationNamingNoReplicaChangesNothing() {
        String old = key();
        String fresh = key();
        NodeIdentityModel.Plan plan = NodeIdentityModel.plan(REPLICAS, map("replica-1", old), map("replica-1", fresh), "replica-7");
        assertEquals("replica-7", plan.unknownRotation());
        assertNull(plan.rotating());
        assertEquals(old, plan.pins().get("replica-1"));
        assertEquals(1, plan.mismatches().size());
        assertFalse(plan.removeAnnotation());
    }

    @Test
    void thePinsConfigMapHoldsOneLinePerPinnedReplicaTheNodeCanRead() {
        QueueCluster cluster = TestClusters.threeReplicas();
        String zero = key();
        String two = key();
        ConfigMap map = NodeIdentityModel.peerIdentitiesConfigMap(cluster, map("replica-0", zero, "replica-2", two));
        assertEquals("replica-node-identities", map.getMetadata().getName());
        assertEquals("trading", map.getMetadata().getNamespace());
        assertEquals(ClusterNames.NODE_IDENTITY_COMPONENT, map.getMetadata().getLabels().get(ClusterNames.LABEL_COMPONENT));
        List<String> lines = map.getData().get(NodePaths.PEER_IDENTITIES_KEY).lines().filter(line -> !line.startsWith("#")).toList();
        assertEquals(List.of("replica-0 " + zero, "replica-2 " + two), lines);
        for (String line : lines) {
            IdentityKey.parsePublicKey(line.split(" ")[1]);   // what the node's reader accepts
        }
    }

    @Test
    void everyDocumentNamesItsKeyFileOnTheDataVolumeAndThePinsFileButNoPeerKey() {
        for (String document : NodeConfigModel.configMapData(TestClusters.threeReplicas(), SETTINGS).values()) {
            assertTrue(document.contains("\nidentityKeyFile: " + NodePaths.DATA_DIRECTORY + "/identity.key\n"), document);
            assertTrue(document.contains("\ndrawIdentityKeyIfAbsent: true\n"), document);
            assertTrue(document.contains("\npeerIdentitiesFile: " + NodePaths.PEER_IDENTITIES_FILE + "\n"), document);
            assertFalse(document.contains("identityKey:"), "pins live in the pins file, never in the document: " + document);
        }
    }

    @Test
    void pinningChangesNeitherTheDocumentsNorTheConfigHash() {
        QueueCluster unpinned = TestClusters.threeReplicas();
        QueueCluster pinned = TestClusters.threeReplicas();
        QueueClusterStatus status = new QueueClusterStatus();
        for (String replica : REPLICAS) {
            ReplicaStatus replicaStatus = new ReplicaStatus();
            replicaStatus.setName(replica);
            replicaStatus.setIdentityKey(key());
            status.getReplicas().add(replicaStatus);
        }
        pinned.setStatus(status);
        assertEquals(NodeConfigModel.configMapData(unpinned, SETTINGS), NodeConfigModel.configMapData(pinned, SETTINGS));
        assertEquals(configHash(unpinned), configHash(pinned), "a pin restarts no pod: the nodes reload the pins file");
    }

    @Test
    void theNodesMountThePinsAsADirectoryOptionally() {
        StatefulSet set = new QueueClusterModel(TestClusters.singleNode(), SETTINGS).statefulSet();
        Volume volume = set.getSpec().getTemplate().getSpec().getVolumes().stream()
            .filter(v -> v.getConfigMap() != null && "solo-node-identities".equals(v.getConfigMap().getName()))
            .findFirst().orElseThrow(() -> new AssertionError("no volume of the node-identities ConfigMap"));
        assertTrue(volume.getConfigMap().getOptional(), "pods start before the operator first writes the pins");
        VolumeMount mount = set.getSpec().getTemplate().getSpec().getContainers().get(0).getVolumeMounts().stream()
            .filter(m -> m.getName().equals(volume.getName())).findFirst().orElseThrow();
        assertEquals(NodePaths.PEER_IDENTITIES_DIRECTORY, mount.getMountPath());
        assertNull(mount.getSubPath(), "a subPath mount is never updated by the kubelet: a pin would need a restart");
        assertTrue(mount.getReadOnly());
        assertTrue(set.getSpec().getTemplate().getSpec().getContainers().get(0).getVolumeMounts().stream()
            .anyMatch(m -> m.getMountPath().equals(NodePaths.DATA_DIRECTORY) && !m.getReadOnly()),
            "the key file's directory is the writable data volume");
    }

    private static String configHash(QueueCluster cluster) {
        return new QueueClusterModel(cluster, SETTINGS).statefulSet().getSpec().getTemplate().getMetadata().getAnnotations()
            .get(QueueClusterModel.CONFIG_HASH_ANNOTATION);
    }
}
