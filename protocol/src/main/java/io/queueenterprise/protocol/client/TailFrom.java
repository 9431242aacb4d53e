package io.queueenterprise.protocol.client;

/** Where a TAIL_OPEN starts; the code is the byte on the wire. */
public enum TailFrom {
    /** Before the first excerpt the node holds. */
    START(0),
    /** After the last excerpt the node holds now: only what is appended from then on. */
    END(1),
    /** At the given index: the first excerpt sent is that one. */
    AT(2),
    /** Right after the given index (a tailer resuming after the last excerpt it returned). */
    AFTER(3);

    private static final TailFrom[] BY_CODE = new TailFrom[8];

    static {
        for (TailFrom v : values()) {
            BY_CODE[v.code] = v; // by the declared code, never the ordinal
        }
    }

    private final int code;

    TailFrom(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The value for a wire code, or null. */
    public static TailFrom of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
