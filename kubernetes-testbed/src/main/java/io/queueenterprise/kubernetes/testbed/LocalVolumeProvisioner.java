package io.queueenterprise.kubernetes.testbed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * A volume provisioner for the one-node test bed, for clusters used by hand (the tests create their volumes
 * themselves): the default StorageClass {@value #STORAGE_CLASS}, whose claims each get a {@code local} PersistentVolume
 * on a directory of their own under {@code volumesDirectory}, pinned to the node, bound to that claim
 * ({@code claimRef}). Deleting the claim deletes the volume and its directory (reclaim policy {@code Delete}, carried out
 * here). The directory is root's, mode 0770: the kubelet gives a pod's {@code fsGroup} to a local volume (the node pods
 * run as 10001 with fsGroup 10001), so other users on this machine cannot read a queue's files.
 *
 * <p>It looks at the claims and volumes every second (a handful on a test bed) rather than keeping watches open.
 */
final class LocalVolumeProvisioner implements AutoCloseable {
    static final String STORAGE_CLASS = "qe-local";
    private static final String PROVISIONER = "queue-enterprise.io/local";
    private static final String PROVISIONED_BY = "pv.kubernetes.io/provisioned-by";

    private final KubernetesClient client;
    private final Path volumesDirectory;
    private final String nodeName;
    private final ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "local-volume-provisioner");
        thread.setDaemon(true);
        return thread;
    });

    /** Claims whose provisioning failed, by UID: reported once, tried again every second. */
    private final Set<String> refused = new HashSet<>();

    LocalVolumeProvisioner(KubernetesClient client, Path volumesDirectory, String nodeName) {
        this.client = client;
        this.volumesDirectory = volumesDirectory;
        this.nodeName = nodeName;
    }

    void start() throws IOException {
        Files.createDirectories(volumesDirectory);
        client.storage().v1().storageClasses().resource(new StorageClassBuilder()
            .withNewMetadata().withName(STORAGE_CLASS)
                .withAnnotations(Map.of("storageclass.kubernetes.io/is-default-class", "true")).endMetadata()
            .withProvisioner(PROVISIONER).withReclaimPolicy("Delete").withVolumeBindingMode("Immediate").build())
            .forceConflicts().serverSideApply();
        loop.scheduleWithFixedDelay(this::reconcileQuietly, 0, 1, TimeUnit.SECONDS);
    }

    private void reconcileQuietly() {
        try {
            reconcile();
        } catch (RuntimeException | IOException e) {
            System.err.println("[local-volume-provisioner] " + e);   // the API server restarting: next second
        }
    }

    /** Provisions a volume for each pending claim of the class; deletes each released volume it provisioned. */
    private void reconcile() throws IOException {
        for (PersistentVolumeClaim claim : client.persistentVolumeClaims().inAnyNamespace().list().getItems()) {
            if (STORAGE_CLASS.equals(claim.getSpec().getStorageClassName()) && claim.getSpec().getVolumeName() == null
                    && "Pending".equals(claim.getStatus() == null ? null : claim.getStatus().getPhase())) {
                try {
                    provision(claim);
                    refused.remove(claim.getMetadata().getUid());
                } catch (RuntimeException | IOException e) {
                    // one claim it cannot serve neither stops the others nor fills the log: said once per claim
                    if (refused.add(claim.getMetadata().getUid())) {
                        System.err.println("[local-volume-provisioner] cannot provision " + claim.getMetadata().getNamespace()
                            + "/" + claim.getMetadata().getName() + ": " + e);
                    }
                }
            }
        }
        for (PersistentVolume volume : client.persistentVolumes().list().getItems()) {
            Map<String, String> annotations = volume.getMetadata().getAnnotations();
            if (annotations != null && PROVISIONER.equals(annotations.get(PROVISIONED_BY)) && volume.getStatus() != null
                    && ("Released".equals(volume.getStatus().getPhase()) || "Failed".equals(volume.getStatus().getPhase()))) {
                Path directory = Path.of(volume.getSpec().getLocal().getPath()).normalize();
                if (directory.startsWith(volumesDirectory) && !directory.equals(volumesDirectory)) {   // only what it made
                    deleteTree(directory);
                }
                client.persistentVolumes().withName(volume.getMetadata().getName()).delete();
                System.err.println("[local-volume-provisioner] deleted " + volume.getMetadata().getName());
            }
        }
    }

    private void provision(PersistentVolumeClaim claim) throws IOException {
        Quantity size = claim.getSpec().getResources() == null || claim.getSpec().getResources().getRequests() == null ? null
            : claim.getSpec().getResources().getRequests().get("storage");
        if (size == null) {
            throw new IllegalArgumentException("the claim requests no storage size (spec.resources.requests.storage)");
        }
        String name = "pvc-" + claim.getMetadata().getUid();
        if (client.persistentVolumes().withName(name).get() != null) {
            return;   // made a second ago; the controller binds it
        }
        Path directory = volumesDirectory.resolve(name);
        Files.createDirectories(directory);
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxrwx---"));
        try {
            client.persistentVolumes().resource(new PersistentVolumeBuilder()
                .withNewMetadata().withName(name).withAnnotations(Map.of(PROVISIONED_BY, PROVISIONER)).endMetadata()
                .withNewSpec()
                    .withCapacity(Map.of("storage", size))
                    .withAccessModes(claim.getSpec().getAccessModes())
                    .withStorageClassName(STORAGE_CLASS)
                    .withPersistentVolumeReclaimPolicy("Delete")
                    .withNewClaimRef().withNamespace(claim.getMetadata().getNamespace()).withName(claim.getMetadata().getName())
                        .withUid(claim.getMetadata().getUid()).endClaimRef()
                    .withNewLocal().withPath(directory.toString()).endLocal()
                    .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression()
                        .withKey("kubernetes.io/hostname").withOperator("In").withValues(nodeName)
                    .endMatchExpression().endNodeSelectorTerm().endRequired().endNodeAffinity()
                .endSpec().build()).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
        }
        System.err.println("[local-volume-provisioner] " + name + " (" + size + ") for " + claim.getMetadata().getNamespace() + "/"
            + claim.getMetadata().getName() + " at " + directory);
    }

    private static void deleteTree(Path directory) throws IOException {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> files = Files.walk(directory)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        }
    }

    @Override
    public void close() {
        loop.shutdownNow();
    }
}
