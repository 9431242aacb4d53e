package io.queueenterprise.kubernetes.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.queueenterprise.kubernetes.probe.CpuList;

/**
 * The operator's core promise on a real kubelet: a Guaranteed pod running our image gets a core of
 * its own from the static CPU manager, pins its hot thread there, and nothing else runs there.
 * This machine has one exclusive core (2 CPUs, {@code reservedSystemCPUs: "0"}), so the test uses
 * one Guaranteed pod and one BestEffort pod beside it; both use the host network (no pod traffic).
 */
@KubernetesTestbed
class GrantedCoresIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROBE = "io.queueenterprise.kubernetes.probe.GrantedCoresReport";
    private static final String CONTAINER = "probe";

    private final Testbed testbed;
    private final KubernetesClient client;
    private String namespace;

    GrantedCoresIT(Testbed testbed) {
        this.testbed = testbed;
        this.client = testbed.client();
    }

    @BeforeEach
    void createNamespace() {
        namespace = "granted-cores-" + UUID.randomUUID().toString().substring(0, 8);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
        // pods are refused until the controller-manager has created the namespace's default service account
        client.serviceAccounts().inNamespace(namespace).withName("default").waitUntilCondition(account -> account != null, 1, TimeUnit.MINUTES);
    }

    @AfterEach
    void deleteNamespace() {
        client.pods().inNamespace(namespace).withGracePeriod(0).delete();
        client.namespaces().withName(namespace).delete();
    }

    @Test
    void guaranteedPodPinsItsHotThreadToAnExclusiveCoreThatABestEffortPodNeverRunsOn() throws Exception {
        Pod guaranteed = client.pods().inNamespace(namespace).resource(probePod("guaranteed",
            Map.of("cpu", new Quantity("1"), "memory", new Quantity("512Mi")),
            "--mode", "pinned", "--hold-seconds", "30")).create();
        assertEquals("Guaranteed", waitUntilRunning(guaranteed.getMetadata().getName()).getStatus().getQosClass());

        // 1. the pod's own report, while its hot thread spins
        JsonNode report = firstReport("guaranteed");
        BitSet granted = CpuList.parse(report.get("processCpusAllowed").asText());
        assertEquals(1, granted.cardinality(), "a 1-CPU Guaranteed pod is granted exactly one core: " + report);
        int core = granted.nextSetBit(0);
        assertNotEquals(0, core, "core 0 is reservedSystemCPUs and must never be granted exclusively");
        assertEquals(core, report.get("hotThreadCore").asInt(), "hot thread pinned to the granted core: " + report);
        assertEquals(String.valueOf(core), report.get("hotThreadCpusAllowed").asText(), "kernel's view of the pinned hot thread: " + report);

        // 2. the kubelet's view, through its PodResources gRPC API
        PodResources resources = testbed.podResources();
        assertTrue(resources.allocatableCpuIds().contains(core), "core " + core + " is allocatable: " + resources);
        assertEquals(List.of(core), resources.container(namespace, "guaranteed", CONTAINER).orElseThrow().cpuIds(),
            "the kubelet assigned the core the pod reports: " + resources);
        assertEquals(List.of(), resources.otherHoldersOf(core, namespace, "guaranteed"), "no other container holds core " + core);

        // 3. a BestEffort pod beside it: its spinning threads, unpinned, never run on the exclusive core
        client.pods().inNamespace(namespace).resource(probePod("besteffort", Map.of(),
            "--mode", "shared", "--threads", "2", "--hold-seconds", "5")).create();
        JsonNode shared = finalReport("besteffort");
        assertFalse(CpuList.parse(shared.get("processCpusAllowed").asText()).get(core),
            "the BestEffort pod's cpuset excludes the exclusive core: " + shared);
        assertTrue(shared.get("samples").asLong() > 0, "the BestEffort pod sampled where it ran: " + shared);
        assertFalse(CpuList.parse(shared.get("observedCpus").asText()).get(core),
            "the BestEffort pod's threads never ran on the exclusive core: " + shared);
        assertEquals(List.of(), testbed.podResources().container(namespace, "besteffort", CONTAINER)
            .map(PodResources.Container::cpuIds).orElse(List.of()), "a BestEffort pod gets no exclusive CPUs");

        // 4. the Guaranteed pod's final report: its hot thread ran only on its core the whole time
        JsonNode pinned = finalReport("guaranteed");
        assertTrue(pinned.get("samples").asLong() > 0, "the hot thread sampled where it ran: " + pinned);
        assertEquals(String.valueOf(core), pinned.get("observedCpus").asText(), "the hot thread ran only on core " + core + ": " + pinned);
    }

    private Pod probePod(String name, Map<String, Quantity> guaranteedResources, String... probeArgs) {
        List<String> args = new java.util.ArrayList<>(List.of(PROBE));
        args.addAll(List.of(probeArgs));
        return new PodBuilder()
            .withNewMetadata().withName(name).withNamespace(namespace).endMetadata()
            .withNewSpec()
                .withRestartPolicy("Never")
                .withHostNetwork(true)
                .withAutomountServiceAccountToken(false)
                .withTerminationGracePeriodSeconds(0L)
                .addNewContainer()
                    .withName(CONTAINER)
                    .withImage(testbed.nodeImage())
                    .withImagePullPolicy("Never")
                    .withArgs(args)
                    .withNewResources().withRequests(guaranteedResources).withLimits(guaranteedResources).endResources()
                .endContainer()
            .endSpec()
            .build();
    }

    private Pod waitUntilRunning(String pod) {
        return client.pods().inNamespace(namespace).withName(pod).waitUntilCondition(
            p -> p != null && p.getStatus() != null && failIfEnded(p, "Running") && "Running".equals(p.getStatus().getPhase()),
            2, TimeUnit.MINUTES);
    }

    private JsonNode firstReport(String pod) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (System.nanoTime() < deadline) {
            for (String line : client.pods().inNamespace(namespace).withName(pod).getLog().split("\n")) {
                if (line.startsWith("GRANTED_CORES ")) {
                    return JSON.readTree(line.substring("GRANTED_CORES ".length()));
                }
            }
            Thread.sleep(200);
        }
        throw new AssertionError("pod " + pod + " printed no GRANTED_CORES report within a minute");
    }

    /** The report the probe wrote to its termination log when it finished. */
    private JsonNode finalReport(String pod) throws Exception {
        Pod finished = client.pods().inNamespace(namespace).withName(pod).waitUntilCondition(
            p -> p != null && p.getStatus() != null && failIfEnded(p, "Succeeded") && "Succeeded".equals(p.getStatus().getPhase()),
            2, TimeUnit.MINUTES);
        return JSON.readTree(finished.getStatus().getContainerStatuses().get(0).getState().getTerminated().getMessage());
    }

    private boolean failIfEnded(Pod pod, String awaited) {
        if ("Failed".equals(pod.getStatus().getPhase())) {
            throw new AssertionError("pod " + pod.getMetadata().getName() + " failed while waiting for " + awaited + ": "
                + pod.getStatus() + "\nlog:\n" + client.pods().inNamespace(namespace).withName(pod.getMetadata().getName()).getLog());
        }
        return true;
    }
}
