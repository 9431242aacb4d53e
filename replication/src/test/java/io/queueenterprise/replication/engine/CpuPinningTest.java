package io.queueenterprise.replication.engine;

import org.junit.jupiter.api.Test;

import java.util.BitSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

@org.junit.jupiter.api.Tag("unit")
class CpuPinningTest {
    @Test
    void parsesLinuxCpuListsAndPinsOnlyWithEnoughGrantedCores() {
        BitSet cpus = CpuPinning.parseCpuList("0-3,8,10-11\n");
        assertEquals("{0, 1, 2, 3, 8, 10, 11}", cpus.toString());
        assertEquals(11, CpuPinning.choose(cpus));
        assertEquals(-1, CpuPinning.choose(CpuPinning.parseCpuList("0-1")), "two cores: left to the scheduler");
        assertEquals(5, CpuPinning.choose(CpuPinning.parseCpuList("2-5")));
        assertThrows(IllegalArgumentException.class, () -> CpuPinning.parseCpuList("3-1"));
    }
}
