package io.queueenterprise.operator.model;

import java.util.List;
import java.util.Map;

/**
 * The operator's own deployment-wide choices that a QueueCluster does not carry: read once from the operator
 * pod's environment (the Helm chart sets them), passed explicitly to the model so that the model stays pure.
 *
 * @param defaultNodeImage      node image when a QueueCluster names none ({@code QE_NODE_IMAGE})
 * @param imagePullPolicy       {@code QE_NODE_IMAGE_PULL_POLICY}; Never for images imported without a registry
 * @param nodeArguments         the node container's arguments; {@code $(POD_NAME)} is expanded by the kubelet
 *                              ({@code QE_NODE_ARGS}, space separated)
 * @param clusterDomain         DNS suffix of Services ({@code QE_CLUSTER_DOMAIN})
 * @param operatorNamespace     where the operator runs: the only namespace admitted to the admin port
 *                              ({@code QE_OPERATOR_NAMESPACE})
 * @param operatorPodLabels     the operator pods' labels, for the NetworkPolicy
 * @param calibrationImage      bench image of calibration Jobs when a QueueCluster names none
 *                              ({@code QE_CALIBRATION_IMAGE}; kubernetes/build-image.sh bench)
 */
public record OperatorSettings(String defaultNodeImage, String imagePullPolicy, List<String> nodeArguments,
                               String clusterDomain, String operatorNamespace, Map<String, String> operatorPodLabels,
                               String calibrationImage) {
    public static final String DEFAULT_CALIBRATION_IMAGE = "queue-enterprise.local/bench:latest";

    /** What the node's command line must accept: run the node from the document rendered for this pod. */
    public static final List<String> DEFAULT_NODE_ARGUMENTS = List.of(
        "io.queueenterprise.cli.QeCommand", "node", "--config", NodePaths.CONFIG_DIRECTORY + "/$(POD_NAME).yaml");

    public OperatorSettings {
        nodeArguments = List.copyOf(nodeArguments);
        operatorPodLabels = Map.copyOf(operatorPodLabels);
    }

    /** Settings with the default calibration image. */
    public OperatorSettings(String defaultNodeImage, String imagePullPolicy, List<String> nodeArguments,
                            String clusterDomain, String operatorNamespace, Map<String, String> operatorPodLabels) {
        this(defaultNodeImage, imagePullPolicy, nodeArguments, clusterDomain, operatorNamespace, operatorPodLabels,
            DEFAULT_CALIBRATION_IMAGE);
    }

    public OperatorSettings withCalibrationImage(String image) {
        return new OperatorSettings(defaultNodeImage, imagePullPolicy, nodeArguments, clusterDomain, operatorNamespace,
            operatorPodLabels, image);
    }

    public static OperatorSettings defaults() {
        return new OperatorSettings("queue-enterprise.local/node:latest", "IfNotPresent", DEFAULT_NODE_ARGUMENTS,
            "cluster.local", "queue-enterprise-system", Map.of("app.kubernetes.io/name", "queue-enterprise-operator"));
    }

    public static OperatorSettings fromEnvironment(Map<String, String> environment) {
        OperatorSettings defaults = defaults();
        String arguments = environment.get("QE_NODE_ARGS");
        return new OperatorSettings(
            environment.getOrDefault("QE_NODE_IMAGE", defaults.defaultNodeImage()),
            environment.getOrDefault("QE_NODE_IMAGE_PULL_POLICY", defaults.imagePullPolicy()),
            arguments == null || arguments.isBlank() ? defaults.nodeArguments() : List.of(arguments.trim().split("\\s+")),
            environment.getOrDefault("QE_CLUSTER_DOMAIN", defaults.clusterDomain()),
            environment.getOrDefault("QE_OPERATOR_NAMESPACE", defaults.operatorNamespace()),
            defaults.operatorPodLabels(),
            environment.getOrDefault("QE_CALIBRATION_IMAGE", DEFAULT_CALIBRATION_IMAGE));
    }
}
