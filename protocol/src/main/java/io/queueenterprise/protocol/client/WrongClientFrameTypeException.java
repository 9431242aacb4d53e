package io.queueenterprise.protocol.client;

/** A decoder of one frame type was wrapped over a frame of another type. */
public final class WrongClientFrameTypeException extends MalformedClientFrameException {
    private final ClientFrameType expected;
    private final ClientFrameType actual;

    public WrongClientFrameTypeException(ClientFrameType expected, ClientFrameType actual) {
        super("type: a " + expected + " decoder cannot read a " + actual + " frame");
        this.expected = expected;
        this.actual = actual;
    }

    public ClientFrameType expected() {
        return expected;
    }

    public ClientFrameType actual() {
        return actual;
    }
}
