package io.queueenterprise.operator.it;

import java.nio.file.Path;
import java.util.Map;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.model.ClusterNames;
import io.queueenterprise.operator.model.OperatorSettings;

/**
 * What the ITs that calibrate on the test bed set up and take down alike: the test bed's node labelled as a tuned node,
 * the bench image, and the in-JVM operator's settings naming it (the CRD: {@link TestbedFixtures}).
 */
final class CalibrationTestbed {
    private CalibrationTestbed() {
    }

    /** Labels (or unlabels) the test bed's one node as a node of the tuned pool. */
    static void labelTuned(KubernetesClient client, Testbed testbed, boolean tuned) {
        client.nodes().withName(testbed.nodeName()).edit(node -> {
            if (tuned) {
                node.getMetadata().getLabels().put(ClusterNames.TUNED_NODE_LABEL, ClusterNames.TUNED_NODE_VALUE);
            } else {
                node.getMetadata().getLabels().remove(ClusterNames.TUNED_NODE_LABEL);
            }
            return node;
        });
    }

    /** Imports the bench image (content-hashed, cached) into the test bed's containerd; returns its reference. */
    static String importBenchImage(Testbed testbed) throws Exception {
        return testbed.importImage("bench", Path.of(System.getProperty("qe.kubernetes.bench-image.app-dir")),
            System.getProperty("qe.kubernetes.image.tag"));
    }

    /** The operator's settings on the test bed: its node image, never pulled, calibrating with {@code benchImage}. */
    static OperatorSettings operatorSettings(Testbed testbed, String benchImage) {
        return new OperatorSettings(testbed.nodeImage(), "Never", OperatorSettings.DEFAULT_NODE_ARGUMENTS,
            "cluster.local", "queue-enterprise-system", Map.of("app.kubernetes.io/name", "queue-enterprise-operator"))
            .withCalibrationImage(benchImage);
    }
}
