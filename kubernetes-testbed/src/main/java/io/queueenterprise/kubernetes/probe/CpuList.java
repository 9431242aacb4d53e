package io.queueenterprise.kubernetes.probe;

import java.util.BitSet;

/**
 * The kernel's CPU list format ({@code "0-3,8,10-11"}), as in {@code /proc/self/status}
 * {@code Cpus_allowed_list} and the cpuset cgroup. Parsing is strict: a malformed list is a bug in
 * what we read, never something to guess around.
 */
public final class CpuList {
    private CpuList() {
    }

    /** @throws IllegalArgumentException naming the list and what is wrong with it */
    public static BitSet parse(String list) {
        BitSet cpus = new BitSet();
        String trimmed = list.trim();
        if (trimmed.isEmpty()) {
            return cpus;
        }
        for (String range : trimmed.split(",", -1)) {
            int dash = range.indexOf('-');
            int first = cpuNumber(list, dash < 0 ? range : range.substring(0, dash));
            int last = dash < 0 ? first : cpuNumber(list, range.substring(dash + 1));
            if (last < first) {
                throw new IllegalArgumentException("CPU list '" + list + "': range " + range + " runs backwards");
            }
            cpus.set(first, last + 1);
        }
        return cpus;
    }

    /** The shortest list form: consecutive CPUs become ranges. */
    public static String format(BitSet cpus) {
        StringBuilder list = new StringBuilder();
        for (int first = cpus.nextSetBit(0); first >= 0; first = cpus.nextSetBit(cpus.nextClearBit(first))) {
            int last = cpus.nextClearBit(first) - 1;
            if (list.length() > 0) {
                list.append(',');
            }
            list.append(first);
            if (last > first) {
                list.append('-').append(last);
            }
        }
        return list.toString();
    }

    private static int cpuNumber(String list, String text) {
        try {
            int cpu = Integer.parseInt(text);
            if (cpu < 0) {
                throw new NumberFormatException();
            }
            return cpu;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("CPU list '" + list + "': '" + text + "' is not a CPU number", e);
        }
    }
}
