package io.queueenterprise.kubernetes.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;

/** Reading what qe-podresources prints (this document is its real output from a run on the test bed). */
@org.junit.jupiter.api.Tag("unit")
class PodResourcesTest {
    private static final String REPORT = """
        {"allocatableCpuIds":[1],"pods":[
          {"namespace":"default","name":"g","containers":[{"name":"probe","cpuIds":[1]}]},
          {"namespace":"default","name":"b","containers":[{"name":"probe","cpuIds":[]}]}]}
        """;

    @Test
    void findsAContainersExclusiveCpusAndOtherHoldersOfACpu() throws Exception {
        PodResources resources = new ObjectMapper().readValue(REPORT, PodResources.class);
        assertEquals(List.of(1), resources.allocatableCpuIds());
        assertEquals(List.of(1), resources.container("default", "g", "probe").orElseThrow().cpuIds());
        assertEquals(List.of(), resources.container("default", "b", "probe").orElseThrow().cpuIds());
        assertTrue(resources.container("default", "absent", "probe").isEmpty());
        assertEquals(List.of(), resources.otherHoldersOf(1, "default", "g"));
        assertEquals(List.of("default/g/probe"), resources.otherHoldersOf(1, "default", "b"));
    }

    @Test
    void scriptKeyValueLinesAreReadInOrderAndOtherLinesIgnored() {
        Map<String, String> values = TestbedScripts.keyValues("KUBECONFIG=/a/b=c\nnoise\nNODE_NAME=qe-node\n");
        assertEquals(List.of("KUBECONFIG", "NODE_NAME"), List.copyOf(values.keySet()));
        assertEquals("/a/b=c", values.get("KUBECONFIG"));
    }
}
