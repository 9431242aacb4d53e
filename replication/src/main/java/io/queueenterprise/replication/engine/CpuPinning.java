package io.queueenterprise.replication.engine;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.BitSet;

/**
 * Pins the duty-cycle thread to one core the process was granted ({@code Cpus_allowed_list} in
 * {@code /proc/self/status}: the kubelet's static CPU manager grants exclusive cores to a Guaranteed pod), only when
 * there are enough: with fewer than {@value #MIN_GRANTED} granted cores the thread is left to the scheduler, since
 * pinning it would starve the JVM's other threads (GC, JIT, the admin endpoint) of the core it spins on.
 */
public final class CpuPinning {
    static final int MIN_GRANTED = 4;
    private static final Logger LOG = LoggerFactory.getLogger(CpuPinning.class);

    private CpuPinning() {
    }

    /** Parses a Linux CPU list ("0-3,8,10-11") into a set. */
    static BitSet parseCpuList(String list) {
        BitSet cpus = new BitSet();
        for (String part : list.trim().split(",")) {
            if (part.isBlank()) {
                continue;
            }
            String[] range = part.trim().split("-");
            int from = Integer.parseInt(range[0].trim());
            int to = range.length > 1 ? Integer.parseInt(range[1].trim()) : from;
            if (from < 0 || to < from) {
                throw new IllegalArgumentException("bad CPU range '" + part + "'");
            }
            cpus.set(from, to + 1);
        }
        return cpus;
    }

    /** The cores this process may run on, from /proc/self/status; empty when unknown (not Linux). */
    static BitSet granted() {
        String list = io.queueenterprise.replication.CpusAllowed.list();
        try {
            return list == null ? new BitSet() : parseCpuList(list);
        } catch (RuntimeException e) {
            LOG.debug("cannot parse Cpus_allowed_list '" + list + "': " + e);
            return new BitSet();
        }
    }

    /** The core to pin to (the highest granted: the lowest ones usually take interrupts), or -1 for none. */
    static int choose(BitSet granted) {
        return granted.cardinality() >= MIN_GRANTED ? granted.length() - 1 : -1;
    }

    /** Pins the calling thread when there are enough granted cores; returns the core, or -1. */
    static int pinCurrentThread(String who) {
        int cpu = choose(granted());
        if (cpu < 0) {
            return -1;
        }
        try {
            net.openhft.affinity.Affinity.setAffinity(cpu);
            LOG.info(who + ": duty-cycle thread pinned to CPU " + cpu);
            return cpu;
        } catch (RuntimeException | LinkageError e) {
            LOG.warn(who + ": cannot pin to CPU " + cpu + ": " + e);
            return -1;
        }
    }
}
