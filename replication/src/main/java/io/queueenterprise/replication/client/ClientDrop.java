package io.queueenterprise.replication.client;

/** Why the gateway dropped a client frame without acting on it (counted; never answered). */
public enum ClientDrop {
    /** The header or body does not decode. */
    MALFORMED,
    /** A handshake frame whose MAC or proof does not verify under the client credential. */
    UNAUTHENTICATED,
    /** A session frame for a connection id the node has no session for (never opened, closed, or timed out). */
    UNKNOWN_SESSION,
    /** A session frame whose MAC does not verify under the session's key. */
    BAD_MAC,
    /** A session frame whose sequence is not above the last one taken on that connection. */
    REPLAYED_FRAME,
    /** A CONNECT for a connection id the node already serves: a replay; the live session is left as it was. */
    REPLAYED_CONNECT,
    /** A CLAIM whose public key does not commit to its epoch, or whose signature does not verify for the connection. */
    BAD_CLAIM,
    /**
     * A CONNECT naming no client of the node's authorised set (never authorised, revoked, or no name where names are
     * required); answered once with a REFUSED {@code UNKNOWN_CLIENT}.
     */
    UNKNOWN_CLIENT,
    /** Valid, but not what the node takes at that point (e.g. an APPEND before the proof). */
    UNEXPECTED
}
