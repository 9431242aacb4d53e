package io.queueenterprise.operator.reconciler.dependent;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.queueenterprise.operator.api.QueueCluster;
import io.queueenterprise.operator.model.ClusterNames;

/**
 * The Prometheus Operator PodMonitor, applied by the reconciler itself rather than JOSDK's workflow: it exists only
 * when asked for and when the PodMonitor CRD is installed, and JOSDK 5.2.3's activation conditions failed on a
 * generic dependent (NoSuchElementException from its event-source configuration, seen in QueueClusterIT).
 */
public final class PodMonitorDependentResource {
    static final String CRD = "podmonitors.monitoring.coreos.com";

    private PodMonitorDependentResource() {
    }

    /** Applies or removes the PodMonitor; returns a line for the status when it was asked for but cannot exist. */
    public static String reconcile(QueueCluster cluster, KubernetesClient client) {
        boolean requested = cluster.getSpec().getMonitoring() != null && Boolean.TRUE.equals(cluster.getSpec().getMonitoring().getPodMonitor());
        boolean crdPresent = client.apiextensions().v1().customResourceDefinitions().withName(CRD).get() != null;
        if (!crdPresent) {
            return requested ? "monitoring.podMonitor is true but the PodMonitor CRD (" + CRD + ") is not installed" : null;
        }
        var podMonitors = client.genericKubernetesResources("monitoring.coreos.com/v1", "PodMonitor")
            .inNamespace(cluster.getMetadata().getNamespace());
        String name = ClusterNames.of(cluster).statefulSet();
        if (!requested) {
            podMonitors.withName(name).delete();
            return null;
        }
        GenericKubernetesResource desired = ModelSupport.model(cluster).podMonitor();
        desired.getMetadata().setOwnerReferences(java.util.List.of(new OwnerReferenceBuilder()
            .withApiVersion(cluster.getApiVersion()).withKind(cluster.getKind()).withName(cluster.getMetadata().getName())
            .withUid(cluster.getMetadata().getUid()).withController(true).withBlockOwnerDeletion(false).build()));
        podMonitors.resource(desired).forceConflicts().serverSideApply();
        return null;
    }
}
