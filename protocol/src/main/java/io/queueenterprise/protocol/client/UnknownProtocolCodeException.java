package io.queueenterprise.protocol.client;

/** A byte that must be one of a protocol code table's entries (a frame type, a refusal reason, a tail mode, ...) is not. */
public final class UnknownProtocolCodeException extends MalformedClientFrameException {
    private final ClientFrameType frameType;
    private final String field;
    private final int code;

    /** @param frameType the frame being read; null when the unknown code is the frame type itself */
    public UnknownProtocolCodeException(ClientFrameType frameType, String field, int code) {
        super((frameType == null ? "" : frameType + " ") + field + ": unknown code " + code);
        this.frameType = frameType;
        this.field = field;
        this.code = code;
    }

    public ClientFrameType frameType() {
        return frameType;
    }

    public String field() {
        return field;
    }

    public int code() {
        return code;
    }
}
