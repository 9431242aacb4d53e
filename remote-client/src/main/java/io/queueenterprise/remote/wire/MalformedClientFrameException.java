package io.queueenterprise.remote.wire;

/** A client-facing frame that does not decode; the message names the field. Counted and dropped by the receiver. */
public final class MalformedClientFrameException extends Exception {
    public MalformedClientFrameException(String message) {
        super(message, null, false, false); // no stack trace: a hostile sender must not make drops expensive
    }
}
