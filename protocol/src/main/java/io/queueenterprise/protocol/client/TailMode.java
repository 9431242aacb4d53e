package io.queueenterprise.protocol.client;

/** Which excerpts a tail sees; the code is the byte on the wire. */
public enum TailMode {
    /** Every excerpt the node holds, as soon as it holds it. */
    ALL(0),
    /** Replicated reads: only excerpts a majority of replicas holds (up to the quorum index the node knows). */
    REPLICATED(1);

    private static final TailMode[] BY_CODE = new TailMode[8];

    static {
        for (TailMode v : values()) {
            BY_CODE[v.code] = v; // by the declared code, never the ordinal
        }
    }

    private final int code;

    TailMode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The value for a wire code, or null. */
    public static TailMode of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
