package io.queueenterprise.kubernetes.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** The probe on this host, for real: /proc, sched_setaffinity through the affinity library. */
@org.junit.jupiter.api.Tag("unit")
class GrantedCoresReportTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path directory;

    @Test
    void pinnedModePinsTheHotThreadToTheLowestAllowedCoreAndSeesItRunOnlyThere() throws Exception {
        assumeTrue(Files.isReadable(Path.of("/proc/thread-self/status")), "needs Linux /proc");
        BitSet allowed = ProcStatus.processCpusAllowed();
        JsonNode report = run("--mode", "pinned", "--hold-seconds", "1");

        int core = allowed.nextSetBit(0);
        assertEquals(CpuList.format(allowed), report.get("processCpusAllowed").asText());
        assertEquals(core, report.get("hotThreadCore").asInt());
        assertEquals(String.valueOf(core), report.get("hotThreadCpusAllowed").asText(), "kernel's view after pinning");
        assertTrue(report.get("samples").asLong() > 0);
        assertEquals(String.valueOf(core), report.get("observedCpus").asText(), "ran only on the pinned core");
    }

    @Test
    void sharedModeSpinsUnpinnedAndOnlyWithinTheProcessCpuset() throws Exception {
        assumeTrue(Files.isReadable(Path.of("/proc/thread-self/status")), "needs Linux /proc");
        BitSet allowed = ProcStatus.processCpusAllowed();
        JsonNode report = run("--mode", "shared", "--threads", "2", "--hold-seconds", "1");

        assertEquals(-1, report.get("hotThreadCore").asInt());
        assertEquals(CpuList.format(allowed), report.get("hotThreadCpusAllowed").asText(), "not pinned");
        BitSet observed = CpuList.parse(report.get("observedCpus").asText());
        assertTrue(!observed.isEmpty(), "sampled at least one CPU: " + report);
        observed.andNot(allowed);
        assertTrue(observed.isEmpty(), "observed only allowed CPUs: " + report);
    }

    @Test
    void badArgumentsAreRefusedWithOneLineNamingTheOption() {
        assertEquals("--mode must be pinned or shared, not 'fast'",
            assertThrows(IllegalArgumentException.class, () -> GrantedCoresReport.Options.parse("--mode", "fast")).getMessage());
        assertEquals("--hold-seconds must be a positive integer, not '0'",
            assertThrows(IllegalArgumentException.class, () -> GrantedCoresReport.Options.parse("--hold-seconds", "0")).getMessage());
        assertEquals("--threads needs a value",
            assertThrows(IllegalArgumentException.class, () -> GrantedCoresReport.Options.parse("--threads")).getMessage());
        assertEquals("unknown option '--cores'",
            assertThrows(IllegalArgumentException.class, () -> GrantedCoresReport.Options.parse("--cores", "1")).getMessage());
    }

    private JsonNode run(String... args) throws Exception {
        Path terminationLog = Files.createFile(directory.resolve("termination-log"));
        GrantedCoresReport.Options options = GrantedCoresReport.Options.parse(
            concat(args, "--termination-log", terminationLog.toString()));
        assertEquals(0, GrantedCoresReport.run(options));
        return JSON.readTree(Files.readString(terminationLog));
    }

    private static String[] concat(String[] first, String... second) {
        String[] all = java.util.Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, all, first.length, second.length);
        return all;
    }
}
