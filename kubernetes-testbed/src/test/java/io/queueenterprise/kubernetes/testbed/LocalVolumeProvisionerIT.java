package io.queueenterprise.kubernetes.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The volume provisioner that {@code node.sh up} runs for a cluster started by hand ({@link ClusterServices}), against
 * the real API server, controller-manager and kubelet: a claim that names no class gets the default {@code qe-local}, a
 * volume of its own on this node, bound; a pod running as the node's non-root user with {@code fsGroup} lists and reads
 * it (the kubelet gives the claim's directory, root's and 0770, to the pod's group); deleting the claim deletes the
 * volume and its directory.
 */
@KubernetesTestbed
@Tag("kubernetes")
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class LocalVolumeProvisionerIT {
    private static final long NODE_UID = 10001;

    @Test
    void aClaimGetsALocalVolumeThatANonRootPodReadsAndLosesItWithTheClaim(Testbed testbed) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(testbed.clusterServicesRunning(),
            "the reused cluster's own provisioner (node.sh's cluster services) owns the qe-local StorageClass");
        KubernetesClient client = testbed.client();
        Path volumes = Files.createTempDirectory(Files.createDirectories(Path.of(System.getProperty("qe.kubernetes.work-dir",
            "target/kubernetes-testbed")).toAbsolutePath()), "volumes-");
        String namespace = "provisioner-" + UUID.randomUUID().toString().substring(0, 8);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        try (LocalVolumeProvisioner provisioner = new LocalVolumeProvisioner(client, volumes, testbed.nodeName())) {
            provisioner.start();
            client.serviceAccounts().inNamespace(namespace).withName("default").waitUntilCondition(a -> a != null, 1, TimeUnit.MINUTES);
            // no storageClassName: the API server's admission gives it the default class
            client.persistentVolumeClaims().inNamespace(namespace).resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName("data").endMetadata()
                .withNewSpec().withAccessModes("ReadWriteOnce").withNewResources()
                    .withRequests(Map.of("storage", new Quantity("1Gi"))).endResources().endSpec().build()).create();
            var bound = client.persistentVolumeClaims().inNamespace(namespace).withName("data").waitUntilCondition(claim ->
                claim != null && claim.getStatus() != null && "Bound".equals(claim.getStatus().getPhase()), 2, TimeUnit.MINUTES);
            assertEquals(LocalVolumeProvisioner.STORAGE_CLASS, bound.getSpec().getStorageClassName());
            PersistentVolume volume = client.persistentVolumes().withName(bound.getSpec().getVolumeName()).get();
            Path directory = Path.of(volume.getSpec().getLocal().getPath());
            assertTrue(directory.startsWith(volumes), directory + " under " + volumes);
            assertEquals("rwxrwx---", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(directory)));
            Files.writeString(directory.resolve("marker.txt"), "PROVISIONED-VOLUME", StandardCharsets.UTF_8);

            // the node image's QueueClient scan, as the node's user with its fsGroup: it lists and reads the claim
            Pod reader = client.pods().inNamespace(namespace).resource(new PodBuilder()
                .withNewMetadata().withName("reader").endMetadata()
                .withNewSpec().withRestartPolicy("Never").withAutomountServiceAccountToken(false)
                    .withNewSecurityContext().withRunAsNonRoot(true).withRunAsUser(NODE_UID).withRunAsGroup(NODE_UID)
                        .withFsGroup(NODE_UID).endSecurityContext()
                    .addNewContainer().withName("reader").withImage(testbed.nodeImage()).withImagePullPolicy("Never")
                        .withArgs("io.queueenterprise.kubernetes.probe.QueueClient", "scan", "/data", "PROVISIONED-VOLUME")
                        .addNewVolumeMount().withName("data").withMountPath("/data").endVolumeMount()
                    .endContainer()
                    .addNewVolume().withName("data").withNewPersistentVolumeClaim().withClaimName("data").endPersistentVolumeClaim().endVolume()
                .endSpec().build()).create();
            Pod finished = client.pods().inNamespace(namespace).withName(reader.getMetadata().getName()).waitUntilCondition(pod ->
                pod != null && pod.getStatus() != null && List.of("Succeeded", "Failed").contains(pod.getStatus().getPhase()), 5, TimeUnit.MINUTES);
            String log = client.pods().inNamespace(namespace).withName("reader").getLog();
            assertEquals("Succeeded", finished.getStatus().getPhase(), log);
            assertTrue(log.contains("MATCHES 1"), "the pod read the claim's file: " + log);

            client.pods().inNamespace(namespace).withName("reader").withGracePeriod(0).delete();
            client.pods().inNamespace(namespace).withName("reader").waitUntilCondition(java.util.Objects::isNull, 2, TimeUnit.MINUTES);
            client.persistentVolumeClaims().inNamespace(namespace).withName("data").delete();
            client.persistentVolumes().withName(volume.getMetadata().getName()).waitUntilCondition(java.util.Objects::isNull, 2, TimeUnit.MINUTES);
            assertFalse(Files.exists(directory), "the claim's directory is deleted with it: " + directory);
        } finally {
            client.namespaces().withName(namespace).delete();
            client.storage().v1().storageClasses().withName(LocalVolumeProvisioner.STORAGE_CLASS).delete();
            try (var files = Files.walk(volumes)) {
                for (Path file : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(file);
                }
            }
        }
    }
}
