package io.queueenterprise.replication.wire;

/**
 * A frame that cannot be decoded: too short, another version, an unknown type, or a field whose value does not fit
 * the frame. The only exception a decoder throws; {@link #field()} names what was wrong.
 */
public final class MalformedFrameException extends Exception {
    private static final long serialVersionUID = 1L;
    private final String field;

    public MalformedFrameException(String field, String problem) {
        super(field + ": " + problem, null, false, false); // no stack trace: thrown for every bad frame, by design
        this.field = field;
    }

    /** The header or body field whose value was wrong. */
    public String field() {
        return field;
    }
}
