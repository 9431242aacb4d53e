package io.queueenterprise.protocol.client;

/** What a TAIL_STATUS says; the code is the byte on the wire. */
public enum TailStatusKind {
    /** The answer to a TAIL_OPEN: the tail is open and continues after the index the frame names. */
    OPENED(0),
    /** A heartbeat while the tail has nothing to send. */
    ALIVE(1);

    private static final TailStatusKind[] BY_CODE = new TailStatusKind[2];

    static {
        for (TailStatusKind k : values()) {
            BY_CODE[k.code] = k;
        }
    }

    private final int code;

    TailStatusKind(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The kind for a wire code, or null. */
    public static TailStatusKind of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
