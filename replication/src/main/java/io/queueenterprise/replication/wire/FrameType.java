package io.queueenterprise.replication.wire;

/** What a frame is; its code is the header's type byte. */
public enum FrameType {
    /** Initiator (a follower) opens a session: its nonce. */
    CHALLENGE(1),
    /** Responder (the leader): its nonce and its proof of the peer credential over both nonces. */
    CHALLENGE_RESPONSE(2),
    /** Initiator's proof over both nonces; the session key is derived from then on. */
    PROOF(3),
    /** Follower: per queue its last index and term history. */
    HELLO(4),
    /** Leader, per queue: its descriptor bytes, its term history, and the index after which it streams. */
    DESCRIPTOR(5),
    /** Leader: a batch of raw excerpts of one queue, each with its index. */
    DATA(6),
    /** Follower: the index up to which it holds one queue with no gap. */
    ACK(7),
    /** Both ways: liveness, and on the leader's side each queue's last and quorum index. */
    HEARTBEAT(8),
    /** A typed refusal (stale term, behind retention, ...). */
    REFUSAL(9),
    /** Leader: one consecutive part of an excerpt too large for a DATA batch; the follower stores it when whole. */
    EXCERPT_PART(10);

    private static final FrameType[] BY_CODE = new FrameType[16];

    static {
        for (FrameType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    public final int code;

    FrameType(int code) {
        this.code = code;
    }

    /** The type of {@code code}, or null for an unknown one. */
    public static FrameType of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
