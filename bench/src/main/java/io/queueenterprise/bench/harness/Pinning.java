package io.queueenterprise.bench.harness;

import net.openhft.affinity.Affinity;

import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Pins the producer to CPU 0 and the consumer to CPU 1 with OpenHFT affinity when the JVM sees at
 * least 2 CPUs, and remembers what it really did for the report.
 */
public final class Pinning {
    public static final String PRODUCER = "producer";
    public static final String CONSUMER = "consumer";

    private final boolean enabled;
    private final int cpus = Runtime.getRuntime().availableProcessors();
    private final Map<String, String> observed = new LinkedHashMap<>();
    private String reason;

    public Pinning(boolean requested) {
        if (!requested) {
            enabled = false;
            reason = "pinning disabled by option";
        } else if (cpus < 2) {
            enabled = false;
            reason = "only " + cpus + " CPU available: nothing pinned";
        } else {
            enabled = true;
            reason = "producer -> CPU 0, consumer -> CPU 1 (Affinity.setAffinity)";
        }
    }

    /** Pins the calling thread for {@code role}; never throws. */
    public void pinCurrentThread(String role) {
        if (!enabled) {
            return;
        }
        int cpu = PRODUCER.equals(role) ? 0 : 1;
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

    /** Records what another process (the consumer process) reported about its own pinning. */
    public void record(String role, String what) {
        synchronized (observed) {
            observed.put(role, what);
        }
    }

    /** What the report says. */
    public PinningInfo info() {
        synchronized (observed) {
            return new PinningInfo(enabled, cpus, reason, new LinkedHashMap<>(observed));
        }
    }

    /**
     * @param enabled   whether threads were pinned
     * @param cpus      Runtime.availableProcessors()
     * @param plan      what was intended, or why nothing was pinned
     * @param threads   role -> CPU actually observed after pinning
     */
    public record PinningInfo(boolean enabled, int cpus, String plan, Map<String, String> threads) {
    }
}
