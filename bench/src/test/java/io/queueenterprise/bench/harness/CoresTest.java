package io.queueenterprise.bench.harness;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** The granted-CPU list as the kernel writes it in /proc/self/status. */
@org.junit.jupiter.api.Tag("unit")
class CoresTest {

    @Test
    void parsesRangesAndSingles() {
        assertEquals(List.of(0, 1), Cores.parse("0-1"));
        assertEquals(List.of(2, 3, 6, 8, 9, 10), Cores.parse("2-3,6,8-10"));
        assertEquals(List.of(5), Cores.parse("5"));
    }

    @Test
    void thisProcessHasAtLeastOneGrantedCpu() {
        Cores granted = Cores.granted();
        assertFalse(granted.cpus().isEmpty(), granted.list());
    }
}
