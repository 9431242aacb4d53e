package io.queueenterprise.replication.node;

/**
 * One cell of the engine's dropped-frame counters beside the per-reason total: frames dropped for {@code reason} that
 * were of {@code frameType}, or that came in the name of (or, for SENDER_MISMATCH, from) the replica {@code peer}.
 * Exactly one of {@code frameType} and {@code peer} is set. Exported as {@code qe_node_frames_dropped_by_type_total}
 * and {@code qe_node_frames_dropped_by_peer_total}.
 */
public record DroppedFrames(String reason, String frameType, String peer, long count) {
    public static DroppedFrames byType(String reason, String frameType, long count) {
        return new DroppedFrames(reason, frameType, null, count);
    }

    public static DroppedFrames byPeer(String reason, String peer, long count) {
        return new DroppedFrames(reason, null, peer, count);
    }
}
