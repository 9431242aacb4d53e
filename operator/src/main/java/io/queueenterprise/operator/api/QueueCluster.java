package io.queueenterprise.operator.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A replicated Queue Enterprise cluster: its queues, replicas, acknowledgement mode and where and how its pods
 * run. The operator turns it into a StatefulSet, a headless Service, the node-configuration ConfigMap, a
 * PodDisruptionBudget and a NetworkPolicy, drives leadership through the nodes' admin endpoints and reports in
 * {@link QueueClusterStatus}. Reference: docs/operator.md.
 */
@Group(QueueCluster.GROUP)
@Version(QueueCluster.VERSION)
@ShortNames("qc")
// kubectl's column order is the CRD's, and the CRD generator sorts these by jsonPath: listed here in that order
// (docs/operator.md's table; CrdDocumentationTest)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
@AdditionalPrinterColumn(name = "Ack", jsonPath = ".spec.ackMode", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Replicas", jsonPath = ".spec.replicas", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Pinned", jsonPath = ".status.conditions[?(@.type==\"Pinned\")].status",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Healthy", jsonPath = ".status.conditions[?(@.type==\"ReplicasHealthy\")].status",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Leader", jsonPath = ".status.leader", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Term", jsonPath = ".status.term", type = AdditionalPrinterColumn.Type.INTEGER)
public class QueueCluster extends CustomResource<QueueClusterSpec, QueueClusterStatus> implements Namespaced {
    public static final String GROUP = "queue-enterprise.io";
    public static final String VERSION = "v1alpha1";

    @Override
    protected QueueClusterStatus initStatus() {
        return new QueueClusterStatus();
    }
}
