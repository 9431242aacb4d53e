package io.queueenterprise.protocol.client;

/** A frame that ends before one of its fields does: names the frame type, the field, and how many bytes were short. */
public final class TruncatedClientFrameException extends MalformedClientFrameException {
    private final ClientFrameType frameType;
    private final String field;
    private final int needed;
    private final int left;

    /** @param frameType the frame being read; null when the frame is too short to say */
    public TruncatedClientFrameException(ClientFrameType frameType, String field, int needed, int left) {
        super((frameType == null ? "" : frameType + " ") + field + ": needs " + needed + " bytes, " + left + " left");
        this.frameType = frameType;
        this.field = field;
        this.needed = needed;
        this.left = left;
    }

    /** The frame type being read; null when the frame is shorter than a header. */
    public ClientFrameType frameType() {
        return frameType;
    }

    public String field() {
        return field;
    }

    public int needed() {
        return needed;
    }

    public int left() {
        return left;
    }
}
