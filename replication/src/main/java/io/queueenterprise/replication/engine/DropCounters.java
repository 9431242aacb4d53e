package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameType;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Dropped frames per reason, per reason and frame type, and per reason and peer identity, written by the duty-cycle
 * thread, read by any (metrics, status, tests). The type is that of the frame being handled ({@link #handling}); none
 * for a frame whose header could not be read. The peer is the position the frame names as its sender, except for
 * {@link DropReason#SENDER_MISMATCH}, counted against the peer whose session key it verified under (who really sent it).
 */
public final class DropCounters {
    private static final int REASONS = DropReason.values().length;
    /** Column 0: no type (the header was unreadable); column {@code code}: {@link FrameType#code}. */
    private static final int TYPE_COLUMNS = 16;
    /** Column {@code p}: the peer at position {@code p}; column {@link Frame#MAX_PEERS}: no peer known. */
    private static final int PEER_COLUMNS = Frame.MAX_PEERS + 1;

    private final AtomicLongArray counts = new AtomicLongArray(REASONS);
    private final AtomicLongArray byType = new AtomicLongArray(REASONS * TYPE_COLUMNS);
    private final AtomicLongArray byPeer = new AtomicLongArray(REASONS * PEER_COLUMNS);
    /** The type of the frame now being handled; 0: none known. Duty-cycle thread only. */
    private int handlingType;
    /** The peer the frame now being handled is counted against; {@link Frame#MAX_PEERS}: none. Duty-cycle thread only. */
    private int handlingPeer = Frame.MAX_PEERS;

    /** The frame now being handled is of {@code type} (null: unknown), from no known peer yet; later drops count against it. */
    void handling(FrameType type) {
        handlingType = type == null ? 0 : type.code;
        handlingPeer = Frame.MAX_PEERS;
    }

    /** The frame now being handled is counted against the peer at {@code position} (a valid peer position). */
    void handlingPeer(int position) {
        handlingPeer = position;
    }

    void increment(DropReason reason) {
        counts.lazySet(reason.ordinal(), counts.get(reason.ordinal()) + 1); // one writer thread
        int cell = reason.ordinal() * TYPE_COLUMNS + handlingType;
        byType.lazySet(cell, byType.get(cell) + 1);
        int peerCell = reason.ordinal() * PEER_COLUMNS + handlingPeer;
        byPeer.lazySet(peerCell, byPeer.get(peerCell) + 1);
    }

    /** Frames counted against the peer at {@code position} and dropped for {@code reason}. */
    public long getByPeer(DropReason reason, int position) {
        return byPeer.get(reason.ordinal() * PEER_COLUMNS + position);
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
