package io.queueenterprise.protocol.client;

/**
 * When the node acknowledges a client's append, as CONNECTED tells the client (the node's queue configuration maps onto
 * it); the code is the byte on the wire.
 */
public enum ClientAckMode {
    /** Acknowledged once the leader holds it. */
    ASYNC(0),
    /** Acknowledged once the leader holds it; readers see only what a majority holds. */
    REPLICATED_READS(1),
    /** Acknowledged once a majority holds it. */
    QUORUM(2);

    private static final ClientAckMode[] BY_CODE = new ClientAckMode[3];

    static {
        for (ClientAckMode m : values()) {
            BY_CODE[m.code] = m;
        }
    }

    private final int code;

    ClientAckMode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The mode for a wire code, or null. */
    public static ClientAckMode of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
