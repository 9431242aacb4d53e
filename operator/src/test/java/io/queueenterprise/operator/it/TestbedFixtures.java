package io.queueenterprise.operator.it;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.crypto.WriteKeys;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.api.QueueCluster;

/**
 * What the ITs on the test bed set up and take down alike: the QueueCluster CRD, local PersistentVolumes (the test bed
 * runs no volume provisioner for the tests: {@code node.sh}'s runs only beside a cluster started by hand, for its
 * default class), their directories, random key material.
 */
public final class TestbedFixtures {
    static final String CRD_NAME = "queueclusters.queue-enterprise.io";
    /** The node image's user (and group): the owner of a volume the node writes before the kubelet applies fsGroup. */
    static final int NODE_UID = 10001;

    private TestbedFixtures() {
    }

    /** The folder the ITs keep their files in (created; absolute, as a local volume's path must be). */
    static Path workDirectory() throws IOException {
        return Files.createDirectories(Path.of(System.getProperty("qe.kubernetes.work-dir", "target/kubernetes-testbed")).toAbsolutePath());
    }

    /** Applies the generated CRD (server-side) and waits until the API server has established it. */
    public static void installCrd(KubernetesClient client) throws IOException {
        installCrd(client, Path.of(System.getProperty("qe.crd.file")));
    }

    /** Applies the CRD in {@code file} (server-side) and waits until the API server has established it. */
    static void installCrd(KubernetesClient client, Path file) throws IOException {
        try (InputStream crd = Files.newInputStream(file)) {
            CustomResourceDefinition definition = client.apiextensions().v1().customResourceDefinitions().load(crd).item();
            client.resource(definition).forceConflicts().serverSideApply();
        }
        client.apiextensions().v1().customResourceDefinitions().withName(CRD_NAME).waitUntilCondition(crd -> crd != null
            && crd.getStatus() != null && crd.getStatus().getConditions() != null && crd.getStatus().getConditions().stream()
            .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus())), 1, TimeUnit.MINUTES);
    }

    /** Deletes the CRD and waits until it is gone: the next test class applies it again, which a terminating CRD refuses. */
    public static void removeCrd(KubernetesClient client) {
        client.apiextensions().v1().customResourceDefinitions().withName(CRD_NAME).delete();
        client.apiextensions().v1().customResourceDefinitions().withName(CRD_NAME).waitUntilCondition(Objects::isNull, 2, TimeUnit.MINUTES);
    }

    /**
     * Deletes the namespace's QueueClusters and pods (grace 0), waits up to two minutes for the pods to go, then deletes
     * the namespace. A wait that times out is reported on stderr and the namespace is deleted all the same, so the
     * rest of a teardown (volumes, the CRD) still runs.
     */
    public static void deleteNamespace(KubernetesClient client, String namespace) {
        client.resources(QueueCluster.class).inNamespace(namespace).delete();
        client.pods().inNamespace(namespace).withGracePeriod(0).delete();
        try {
            client.pods().inNamespace(namespace).informOnCondition(List::isEmpty).orTimeout(2, TimeUnit.MINUTES).join();
        } catch (CompletionException e) {
            System.err.println("[teardown] pods of " + namespace + " still there after 2 minutes (" + e.getCause()
                + "); deleting the namespace anyway");
        }
        client.namespaces().withName(namespace).delete();
    }

    /**
     * A local PersistentVolume {@code name} of {@code storageClass} (1Gi, ReadWriteOnce, Retain) on {@code directory},
     * pinned to the test bed's one node.
     */
    static void createLocalVolume(KubernetesClient client, Testbed testbed, String name, String storageClass, Path directory) {
        client.persistentVolumes().resource(new PersistentVolumeBuilder()
            .withNewMetadata().withName(name).endMetadata()
            .withNewSpec()
                .withCapacity(Map.of("storage", new Quantity("1Gi")))
                .withAccessModes("ReadWriteOnce")
                .withStorageClassName(storageClass)
                .withPersistentVolumeReclaimPolicy("Retain")
                .withNewLocal().withPath(directory.toString()).endLocal()
                .withNewNodeAffinity().withNewRequired().addNewNodeSelectorTerm().addNewMatchExpression()
                    .withKey("kubernetes.io/hostname").withOperator("In").withValues(testbed.nodeName())
                .endMatchExpression().endNodeSelectorTerm().endRequired().endNodeAffinity()
            .endSpec().build()).create();
    }

    /** A new directory under {@code parent}, the node's user's and {@code rwxr-x---}, for a replica's volume. */
    static Path nodeOwnedDirectory(Path parent, String prefix) throws IOException {
        Path directory = Files.createTempDirectory(parent, prefix);
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-x---"));
        Files.setAttribute(directory, "unix:uid", NODE_UID);
        Files.setAttribute(directory, "unix:gid", NODE_UID);
        return directory;
    }

    /**
     * The nodes' write-key Secret {@code name} for {@code queues} under the data key {@code dataKeyHex} of version
     * {@code keyId}, as the team holding the data keys makes it: the entries {@code qe write-keys} writes
     * ({@code WriteKeysCommand}: {@link WriteKeys#derive} of the master key, hex, {@code <queue>.<key id>.key}), which
     * {@code kubectl create secret generic --from-file} turns into one Secret. Derived one way: no data key in it.
     */
    static Secret writeKeySecret(String name, int keyId, String dataKeyHex, String... queues) {
        SecretBuilder secret = new SecretBuilder().withNewMetadata().withName(name).endMetadata();
        byte[] material = HexFormat.of().parseHex(dataKeyHex);
        MasterKey master = MasterKey.of(keyId, material);
        Arrays.fill(material, (byte) 0);
        try {
            for (String queue : queues) {
                byte[] key = WriteKeys.derive(master, queue);
                secret.addToStringData(queue + "." + keyId + ".key", HexFormat.of().formatHex(key));
                Arrays.fill(key, (byte) 0);
            }
        } finally {
            master.destroy();
        }
        return secret.build();
    }

    static byte[] randomBytes(int length) {
        byte[] bytes = new byte[length];
        new SecureRandom().nextBytes(bytes);
        return bytes;
    }

    /** Deletes {@code directory} and everything under it; nothing when it does not exist. */
    static void deleteTree(Path directory) throws IOException {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> files = Files.walk(directory)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        }
    }
}
