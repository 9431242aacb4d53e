package io.queueenterprise.protocol.client;

/** The client-facing frame types (wire format version {@value ClientProtocol#VERSION}); the code is the byte on the wire. */
public enum ClientFrameType {
    /** client → node: its nonce, the queue it wants, where to answer (handshake MAC). */
    CONNECT(1),
    /** node → client: both nonces and the node's proof (handshake MAC). */
    CHALLENGE(2),
    /** client → node: the client's proof (handshake MAC). */
    PROOF(3),
    /** node → client: session open; the node's term, whether it leads, the leader's client address, the descriptor. */
    CONNECTED(4),
    /** client → node: one sealed (unbound) envelope, with the writer epoch and sequence it carries. */
    APPEND(5),
    /** node → client: the envelope is at this index and the queue's ack mode is met. */
    APPEND_ACK(6),
    /** node → client: the envelope is at this index, waiting for a quorum (answer to a retry while it waits). */
    APPEND_PENDING(7),
    /** node → client: refused, with a typed reason; nothing was appended for it. */
    REFUSED(8),
    /** client → node: stream the queue's excerpts from the start, the end, at an index or after one; with initial credit. */
    TAIL_OPEN(9),
    /** node → client: the tail is open (where it continues), or still alive (a heartbeat while nothing is sent). */
    TAIL_STATUS(10),
    /** node → client: one excerpt's envelope as stored, or one piece of it, with its index. */
    TAIL_DATA(11),
    /** client → node: the client took excerpts; the node may send this many more (0: a keep-alive). */
    TAIL_CREDIT(12),
    /** node → client: the tail ends, with a typed reason (and the first and last index this node holds). */
    TAIL_END(13),
    /** client → node: this connection writes under a writer epoch, proven by the epoch's key ({@link WriterClaim}). */
    CLAIM(14),
    /**
     * client → node: several consecutive appends of one writer epoch in one frame under one session MAC, each with
     * its own write tag; taken exactly as that many APPENDs in a row (version 4).
     */
    APPEND_BATCH(15);

    private static final ClientFrameType[] BY_CODE = new ClientFrameType[16];

    static {
        for (ClientFrameType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    private final int code;

    ClientFrameType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The type for a wire code, or null. */
    public static ClientFrameType of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
