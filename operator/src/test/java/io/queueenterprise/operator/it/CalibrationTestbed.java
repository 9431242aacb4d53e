package io.queueenterprise.operator.it;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.queueenterprise.kubernetes.testbed.Testbed;
import io.queueenterprise.operator.model.ClusterNames;
import io.queueenterprise.operator.model.OperatorSettings;

/**
 * What the ITs that calibrate on the test bed set up and take down alike: the QueueCluster CRD (installed and
 * established), the test bed's node labelled as a tuned node, the bench image, and the in-JVM operator's settings
 * naming it. {@link QueueClusterScenario} installs the CRD the same way.
 */
final class CalibrationTestbed {
    static final String CRD_NAME = "queueclusters.queue-enterprise.io";

    private CalibrationTestbed() {
    }

    /** Applies the generated CRD (server-side) and waits until the API server has established it. */
    static void installCrd(KubernetesClient client) throws java.io.IOException {
        try (InputStream crd = Files.newInputStream(Path.of(System.getProperty("qe.crd.file")))) {
            CustomResourceDefinition definition = client.apiextensions().v1().customResourceDefinitions().load(crd).item();
            client.resource(definition).forceConflicts().serverSideApply();
        }
        client.apiextensions().v1().customResourceDefinitions().withName(CRD_NAME).waitUntilCondition(crd -> crd != null
            && crd.getStatus() != null && crd.getStatus().getConditions() != null && crd.getStatus().getConditions().stream()
            .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus())), 1, TimeUnit.MINUTES);
    }

    static void removeCrd(KubernetesClient client) {
        client.apiextensions().v1().customResourceDefinitions().withName(CRD_NAME).delete();
        client.apiextensions().v1().customResourceDefinitions().withName(CRD_NAME).waitUntilCondition(Objects::isNull, 2, TimeUnit.MINUTES);
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
