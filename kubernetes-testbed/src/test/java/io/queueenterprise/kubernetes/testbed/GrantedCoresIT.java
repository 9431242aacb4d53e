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
@org.junit.jupiter.api.Tag("kubernetes")
@org.junit.jupiter.api.Tag("slow")
class GrantedCoresIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROBE = "io.queueenterprise.kubernetes.probe.GrantedCoresReport";
    private static final String CONTAINER = "probe";
    /** Longer than the test needs: the test deletes the pod; the hold only bounds a pod left behind. */
    private static final int GUARANTEED_HOLD_SECONDS = 600;
    /**
     * A BestEffort pod's cgroup has cpu.shares 2: on a busy shared machine its sandbox and JVM start
     * slowly (28 s for the sandbox was seen here at load 14), so waits for pods are generous.
     */
    private static final long POD_WAIT_MINUTES = 5;

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
        // wait until the pods are gone: the exclusive core is free again for whatever test runs next
        client.pods().inNamespace(namespace).informOnCondition(List::isEmpty).orTimeout(1, TimeUnit.MINUTES).join();
        client.namespaces().withName(namespace).delete();
    }

    @Test
    void guaranteedPodPinsItsHotThreadToAnExclusiveCoreThatABestEffortPodNeverRunsOn() throws Exception {
        Pod guaranteed = client.pods().inNamespace(namespace).resource(probePod("guaranteed",
            Map.of("cpu", new Quantity("1"), "memory", new Quantity("512Mi")),
            // parked between samples: a busy-spinning pod skews the kubepods cgroup's weight onto its
            // core and starves the BestEffort pod on the shared core while the host is busy
            "--mode", "pinned", "--hold-seconds", String.valueOf(GUARANTEED_HOLD_SECONDS), "--park-between-samples", "true")).create();
        assertEquals("Guaranteed", waitUntilRunning(guaranteed.getMetadata().getName()).getStatus().getQosClass());

        // 1. the pod's own report, while its hot thread spins
        JsonNode report = latestReport("guaranteed", "GRANTED_CORES ");
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

        // 4. the core stayed exclusive for the BestEffort pod's whole life: the Guaranteed pod still
        //    runs (when it ends, the kubelet widens the shared pool back over its core, live)
        Pod holder = client.pods().inNamespace(namespace).withName("guaranteed").get();
        assertEquals("Running", holder.getStatus().getPhase(),
            "the Guaranteed pod must outlive the BestEffort pod for the check to mean anything: " + holder.getStatus());
        assertEquals(List.of(core), testbed.podResources().container(namespace, "guaranteed", CONTAINER).orElseThrow().cpuIds());

        // 5. and its hot thread has run only on its core so far
        JsonNode pinned = latestReport("guaranteed", "GRANTED_CORES_PROGRESS ");
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
            POD_WAIT_MINUTES, TimeUnit.MINUTES);
    }

    /** The last report line with this prefix in the pod's log, waiting for one. */
    private JsonNode latestReport(String pod, String prefix) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(POD_WAIT_MINUTES);
        while (System.nanoTime() < deadline) {
            String latest = null;
            for (String line : client.pods().inNamespace(namespace).withName(pod).getLog().split("\n")) {
                if (line.startsWith(prefix)) {
                    latest = line.substring(prefix.length());
                }
            }
            if (latest != null) {
                return JSON.readTree(latest);
            }
            Thread.sleep(200);
        }
        throw new AssertionError("pod " + pod + " printed no '" + prefix.trim() + "' report within " + POD_WAIT_MINUTES + " minutes");
    }

    /** The report the probe wrote to its termination log when it finished. */
    private JsonNode finalReport(String pod) throws Exception {
        Pod finished = client.pods().inNamespace(namespace).withName(pod).waitUntilCondition(
            p -> p != null && p.getStatus() != null && failIfEnded(p, "Succeeded") && "Succeeded".equals(p.getStatus().getPhase()),
            POD_WAIT_MINUTES, TimeUnit.MINUTES);
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
