package io.queueenterprise.operator.it;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.queueenterprise.kubernetes.testbed.Testbed;

/**
 * A QueueCluster's volumes on the test bed: one local PersistentVolume per replica, named after the test's own storage
 * class ({@code CLASS-0}, {@code CLASS-1}, ...), each on a directory of its own owned by the node's user.
 */
final class ReplicaVolumes {
    private final Testbed testbed;
    private final String storageClass;
    private final Path parent;
    private final List<Path> directories = new ArrayList<>();

    ReplicaVolumes(Testbed testbed, String storageClass, Path parent) {
        this.testbed = testbed;
        this.storageClass = storageClass;
        this.parent = parent;
    }

    /** One more volume (and its directory), for one more replica's claim. */
    void add() throws IOException {
        Path directory = TestbedFixtures.nodeOwnedDirectory(parent, "node-pv-");
        directories.add(directory);
        TestbedFixtures.createLocalVolume(testbed.client(), testbed, name(directories.size() - 1), storageClass, directory);
    }

    /** Deletes every volume made, then their directories. */
    void delete() throws IOException {
        for (int index = 0; index < directories.size(); index++) {
            testbed.client().persistentVolumes().withName(name(index)).delete();
        }
        for (Path directory : directories) {
            TestbedFixtures.deleteTree(directory);
        }
    }

    private String name(int index) {
        return storageClass + "-" + index;
    }
}
