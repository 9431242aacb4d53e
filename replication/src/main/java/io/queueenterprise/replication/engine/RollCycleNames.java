package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.ReplicationException;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;

/** A roll cycle by its Chronicle name: {@link RollCycles} (FAST_DAILY, ...) or, for tests, {@link TestRollCycles}. */
public final class RollCycleNames {
    private RollCycleNames() {
    }

    public static RollCycle of(String name) {
        try {
            return RollCycles.valueOf(name);
        } catch (IllegalArgumentException notProduction) {
            try {
                return TestRollCycles.valueOf(name);
            } catch (IllegalArgumentException e) {
                throw new ReplicationException("unknown roll cycle '" + name + "'");
            }
        }
    }
}
