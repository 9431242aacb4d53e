package io.queueenterprise.replication.engine;

/** Why a received frame was dropped; each has its own counter ({@link DropCounters}). */
public enum DropReason {
    /** The decoder refused it (MalformedFrameException). */
    MALFORMED,
    /**
     * Another version of the frame format ({@code Frame.VERSION}): a node of another release, whose keys or layout
     * this node does not share (version 1 had one session key for both directions). Logged, naming the version.
     */
    UNSUPPORTED_VERSION,
    /**
     * A handshake frame whose MAC under the handshake key fails (the sender does not hold the peer credential), or whose
     * signature is not that of the identity key of the node it names (an insider speaking as another node).
     */
    UNAUTHENTICATED,
    /** A session frame whose MAC under the session key fails. */
    BAD_MAC,
    /**
     * A session frame whose MAC fails under the keys of the sender it names but verifies under another peer's session:
     * a node (holding its own identity key) speaking as another. Counted against the identity that really sent it.
     */
    SENDER_MISMATCH,
    /** A session frame of no established session (never authenticated, or superseded). */
    UNKNOWN_SESSION,
    /** A session frame whose sequence does not increase, or a CHALLENGE answered lately (replayed). */
    REPLAYED,
    /** Sent by a position that is not a peer of this cluster, or by this node's own position. */
    UNKNOWN_PEER,
    /** Its term is older than this node's: refused. */
    STALE_TERM,
    /** Its term is newer than this node's: only the admin endpoint moves terms; refused until told. */
    TERM_AHEAD,
    /** Valid but not for this node's role now (e.g. DATA while leading, from a peer it does not follow). */
    UNEXPECTED
}
