package io.queueenterprise.protocol.client;

/**
 * Why a node refused a client's request. Every refusal means: nothing was appended for that request.
 * The code is the byte on the wire.
 */
public enum ClientRefusal {
    /** The client did not prove the cluster's client credential. */
    UNAUTHENTICATED(1, false),
    /** This node does not lead the queue; the refusal names the leader's client address and term when known. */
    NOT_LEADER(2, true),
    /** This node knows of no leader (standby or fenced): try another node, or wait for the operator. */
    NO_LEADER(3, true),
    /** The node leads under an older term than the client has already seen from a newer leader. */
    STALE_TERM(4, true),
    /** The envelope is larger than the node accepts from clients. */
    TOO_LARGE(5, false),
    /** The node hosts no queue of that name. */
    UNKNOWN_QUEUE(6, false),
    /** The queue is not encrypted: remote clients only append sealed envelopes (nodes hold no data keys). */
    PLAIN_QUEUE(7, false),
    /** The queue has no descriptor yet: a key holder (a local writer, or the qe tool) must create it first. */
    NO_DESCRIPTOR(8, false),
    /** The bytes are not an unbound envelope of the queue's mode, or disagree with the frame's epoch/sequence. */
    MALFORMED_ENVELOPE(9, false),
    /** The writer sequence is below the last one this writer session appended: a replay, not appended. */
    REPLAYED(10, false),
    /** The leader cannot store (disk full, or the queue is not live). */
    CANNOT_STORE(11, true),
    /** The node serves as many client sessions as it accepts. */
    TOO_MANY_CLIENTS(12, true),
    /** The new leader is still reading its queue's tail to rebuild the writer sessions; retry shortly. */
    NOT_READY(13, true),
    /** Tail: the node does not hold that index (not written yet, or never); the refusal names the first and last it holds. */
    INDEX_NOT_FOUND(14, false),
    /** Tail: the index is before the first one the node still holds (retention removed it). */
    BEHIND_RETENTION(15, false),
    /** Tail: the client did not take what it was sent for too long; the node closed the tail (the client resumes). */
    SLOW_CONSUMER(16, true),
    /** Tail: the node cannot read its copy of the queue at that point (damage, a rebuilt copy); another replica may. */
    UNREADABLE(17, true),
    /**
     * The connection has not claimed the APPEND's writer epoch ({@link WriterClaim}): the epoch belongs to another
     * writer session, or the client sent no CLAIM for it.
     */
    NOT_WRITER(18, false),
    /**
     * The writer sequence is above the next one for its epoch (a jump); the message names the expected sequence
     * ("expected writer sequence N"). Nothing was appended.
     */
    SEQUENCE_GAP(19, false),
    /**
     * The APPEND's write-authorisation tag does not verify under the queue's write key for the envelope's key
     * version, or the node holds no write key for that version: the client did not prove it holds the data key.
     */
    WRITE_UNAUTHORISED(20, false),
    /**
     * The node authorises named clients and the CONNECT names none of them (never authorised, or revoked): nothing
     * this client sends is taken. The message names the client.
     */
    UNKNOWN_CLIENT(21, false),
    /**
     * The node leads its term but holds no leader lease: it has not heard a majority of replicas at its term lately
     * (cut off), or its term is not confirmed yet (restarted, or just promoted). Nothing was appended: try another
     * node, or the same one later.
     */
    LEASE_LAPSED(22, true);

    private static final ClientRefusal[] BY_CODE = new ClientRefusal[32];

    static {
        for (ClientRefusal r : values()) {
            BY_CODE[r.code] = r;
        }
    }

    private final int code;
    private final boolean retryElsewhere;

    ClientRefusal(int code, boolean retryElsewhere) {
        this.code = code;
        this.retryElsewhere = retryElsewhere;
    }

    public int code() {
        return code;
    }

    /** Whether another node, or the same one later, may accept the same request. */
    public boolean retryable() {
        return retryElsewhere;
    }

    /** The reason for a wire code, or null. */
    public static ClientRefusal of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
