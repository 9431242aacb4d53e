package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.wire.FrameType;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Dropped frames per reason, and per reason and frame type, written by the duty-cycle thread, read by any (metrics,
 * status, tests). The type is that of the frame being handled ({@link #handling}); none for a frame whose header
 * could not be read.
 */
public final class DropCounters {
    private static final int REASONS = DropReason.values().length;
    /** Column 0: no type (the header was unreadable); column {@code code}: {@link FrameType#code}. */
    private static final int TYPE_COLUMNS = 16;

    private final AtomicLongArray counts = new AtomicLongArray(REASONS);
    private final AtomicLongArray byType = new AtomicLongArray(REASONS * TYPE_COLUMNS);
    /** The type of the frame now being handled; 0: none known. Duty-cycle thread only. */
    private int handlingType;

    /** The frame now being handled is of {@code type} (null: unknown); later drops count against it. */
    void handling(FrameType type) {
        handlingType = type == null ? 0 : type.code;
    }

    void increment(DropReason reason) {
        counts.lazySet(reason.ordinal(), counts.get(reason.ordinal()) + 1); // one writer thread
        int cell = reason.ordinal() * TYPE_COLUMNS + handlingType;
        byType.lazySet(cell, byType.get(cell) + 1);
    }

    public long get(DropReason reason) {
        return counts.get(reason.ordinal());
    }

    /** Frames of {@code type} dropped for {@code reason}; {@code type} null: frames whose header was unreadable. */
    public long get(DropReason reason, FrameType type) {
        return byType.get(reason.ordinal() * TYPE_COLUMNS + (type == null ? 0 : type.code));
    }

    public long total() {
        long sum = 0;
        for (int i = 0; i < counts.length(); i++) {
            sum += counts.get(i);
        }
        return sum;
    }
}
