package io.queueenterprise.replication.node;

/**
 * One cell of the engine's dropped-frame counters beside the per-reason total: frames dropped for {@code reason} that
 * were of {@code frameType}, or that came in the name of (or, for SENDER_MISMATCH, from) the replica {@code peer}.
 * Or a remote client's handshake frames dropped for {@code reason} ({@code ClientDrop}) naming {@code client}.
 * Exactly one of {@code frameType}, {@code peer} and {@code client} is set. Exported as
 * {@code qe_node_frames_dropped_by_type_total}, {@code qe_node_frames_dropped_by_peer_total} and
 * {@code qe_node_client_frames_dropped_by_client_total}.
 */
public record DroppedFrames(String reason, String frameType, String peer, String client, long count) {
    public static DroppedFrames byType(String reason, String frameType, long count) {
        return new DroppedFrames(reason, frameType, null, null, count);
    }

    public static DroppedFrames byPeer(String reason, String peer, long count) {
        return new DroppedFrames(reason, null, peer, null, count);
    }

    public static DroppedFrames byClient(String reason, String client, long count) {
        return new DroppedFrames(reason, null, null, client, count);
    }
}
