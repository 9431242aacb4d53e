package io.queueenterprise.operator.reconciler;

import java.util.BitSet;

/** A Linux cpu list ({@code Cpus_allowed_list}: "1", "2-3", "0,4-5"). */
public final class CpuSet {
    private CpuSet() {
    }

    /** @throws IllegalArgumentException naming the list when it is not one */
    public static BitSet parse(String list) {
        BitSet cpus = new BitSet();
        if (list == null || list.isBlank()) {
            throw new IllegalArgumentException("empty cpu list");
        }
        try {
            for (String part : list.trim().split(",")) {
                int dash = part.indexOf('-');
                int from = Integer.parseInt(part.substring(0, dash < 0 ? part.length() : dash).trim());
                int to = dash < 0 ? from : Integer.parseInt(part.substring(dash + 1).trim());
                if (from < 0 || to < from) {
                    throw new IllegalArgumentException("not a cpu list: \"" + list + "\"");
                }
                cpus.set(from, to + 1);
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a cpu list: \"" + list + "\"", e);
        }
        return cpus;
    }
}
