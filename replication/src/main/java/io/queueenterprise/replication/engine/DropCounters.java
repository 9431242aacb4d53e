package io.queueenterprise.replication.engine;

import java.util.concurrent.atomic.AtomicLongArray;

/** Dropped frames per reason, written by the duty-cycle thread, read by any (metrics, status). */
public final class DropCounters {
    private final AtomicLongArray counts = new AtomicLongArray(DropReason.values().length);

    void increment(DropReason reason) {
        counts.lazySet(reason.ordinal(), counts.get(reason.ordinal()) + 1); // one writer thread
    }

    public long get(DropReason reason) {
        return counts.get(reason.ordinal());
    }

    public long total() {
        long sum = 0;
        for (int i = 0; i < counts.length(); i++) {
            sum += counts.get(i);
        }
        return sum;
    }
}
