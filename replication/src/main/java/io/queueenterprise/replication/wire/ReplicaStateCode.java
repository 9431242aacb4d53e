package io.queueenterprise.replication.wire;

import io.queueenterprise.replication.QueueStatus;

/**
 * The protocol code of a replica's {@link QueueStatus.State} in an ACK: a fixed table, so reordering or adding states
 * in the Java enum cannot change what a byte means between nodes of different builds. The table equals the enum's
 * declaration order as of wire format 1, so the bytes on the wire did not change when it replaced the ordinal.
 */
public final class ReplicaStateCode {
    public static final int LIVE = 0;
    public static final int CATCHING_UP = 1;
    public static final int BEHIND_RETENTION = 2;
    public static final int DISK_FULL = 3;
    public static final int CORRUPTED = 4;
    public static final int STOPPED = 5;

    private ReplicaStateCode() {
    }

    /** The code of {@code state} (a new state without a code does not compile: the switch is exhaustive). */
    public static int code(QueueStatus.State state) {
        return switch (state) {
            case LIVE -> LIVE;
            case CATCHING_UP -> CATCHING_UP;
            case BEHIND_RETENTION -> BEHIND_RETENTION;
            case DISK_FULL -> DISK_FULL;
            case CORRUPTED -> CORRUPTED;
            case STOPPED -> STOPPED;
        };
    }

    /** The state of {@code code}, or null for an unknown code. */
    public static QueueStatus.State state(int code) {
        return switch (code) {
            case LIVE -> QueueStatus.State.LIVE;
            case CATCHING_UP -> QueueStatus.State.CATCHING_UP;
            case BEHIND_RETENTION -> QueueStatus.State.BEHIND_RETENTION;
            case DISK_FULL -> QueueStatus.State.DISK_FULL;
            case CORRUPTED -> QueueStatus.State.CORRUPTED;
            case STOPPED -> QueueStatus.State.STOPPED;
            default -> null;
        };
    }
}
