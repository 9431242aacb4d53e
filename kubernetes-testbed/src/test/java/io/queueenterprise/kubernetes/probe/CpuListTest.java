package io.queueenterprise.kubernetes.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.BitSet;

import org.junit.jupiter.api.Test;

@org.junit.jupiter.api.Tag("unit")
class CpuListTest {
    @Test
    void parsesSinglesAndRangesAndFormatsTheShortestForm() {
        BitSet cpus = CpuList.parse(" 0-2,5,7-8\n");
        assertEquals("{0, 1, 2, 5, 7, 8}", cpus.toString());
        assertEquals("0-2,5,7-8", CpuList.format(cpus));
        assertEquals("1", CpuList.format(CpuList.parse("1")));
        assertEquals("3-4", CpuList.format(CpuList.parse("3,4")));
    }

    @Test
    void emptyListIsNoCpus() {
        assertTrue(CpuList.parse("").isEmpty());
        assertEquals("", CpuList.format(new BitSet()));
    }

    @Test
    void malformedListsAreRefusedNamingTheList() {
        assertEquals("CPU list '1-x': 'x' is not a CPU number",
            assertThrows(IllegalArgumentException.class, () -> CpuList.parse("1-x")).getMessage());
        assertEquals("CPU list '3-1': range 3-1 runs backwards",
            assertThrows(IllegalArgumentException.class, () -> CpuList.parse("3-1")).getMessage());
        assertThrows(IllegalArgumentException.class, () -> CpuList.parse("1,,2"));
        assertThrows(IllegalArgumentException.class, () -> CpuList.parse("-1"));
    }
}
