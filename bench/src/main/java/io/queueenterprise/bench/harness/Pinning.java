package io.queueenterprise.bench.harness;

import net.openhft.affinity.Affinity;

import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Pins the producer to the first and the consumer to the second CPU this process was granted
 * ({@link Cores}: not CPU 0 and 1 of the machine, which a cpuset may not include) with OpenHFT
 * affinity, and remembers what it really did for the report.
 */
public final class Pinning {
    public static final String PRODUCER = "producer";
    public static final String CONSUMER = "consumer";

    private final boolean enabled;
    private final Cores cores = Cores.granted();
    private final Map<String, String> observed = new LinkedHashMap<>();
    private final String reason;

    public Pinning(boolean requested) {
        if (!requested) {
            enabled = false;
            reason = "pinning disabled by option";
        } else if (cores.count() < 2) {
            enabled = false;
            reason = "only " + cores.count() + " CPU granted (" + cores.list() + "): nothing pinned";
        } else {
            enabled = true;
            reason = "producer -> CPU " + cpuFor(PRODUCER) + ", consumer -> CPU " + cpuFor(CONSUMER)
                    + " (the first two of the granted " + cores.list() + ")";
        }
    }

    private int cpuFor(String role) {
        return cores.cpus().get(PRODUCER.equals(role) ? 0 : 1);
    }

    /** Pins the calling thread for {@code role}; never throws. */
    public void pinCurrentThread(String role) {
        if (!enabled) {
            return;
        }
        int cpu = cpuFor(role);
        try {
            Affinity.setAffinity(cpu);
            BitSet now = Affinity.getAffinity();
            synchronized (observed) {
                observed.put(role, "CPU " + cpu + (now.cardinality() == 1 && now.get(cpu)
                        ? "" : " requested, affinity now " + now));
            }
        } catch (Throwable t) {
            synchronized (observed) {
                observed.put(role, "pinning failed: " + t);
            }
        }
    }

    /** Records what another process (a subject's JVM, the consumer process) reported about its pinning. */
    public void record(String role, String what) {
        synchronized (observed) {
            observed.put(role, what);
        }
    }

    /** What the report says. */
    public PinningInfo info() {
        synchronized (observed) {
            return new PinningInfo(enabled, cores.count(), cores.list(), reason, new LinkedHashMap<>(observed));
        }
    }

    /**
     * @param enabled     whether threads were pinned
     * @param cpus        CPUs granted to this process
     * @param grantedList the granted CPUs as the kernel lists them (Cpus_allowed_list)
     * @param plan        what was intended, or why nothing was pinned
     * @param threads     role -> CPU actually observed after pinning
     */
    public record PinningInfo(boolean enabled, int cpus, String grantedList, String plan, Map<String, String> threads) {
    }
}
