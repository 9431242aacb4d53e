package io.queueenterprise.protocol.client;

/**
 * A client-facing frame that does not decode; the message names the frame type (when known) and the field. Counted
 * and dropped by the receiver. The subclasses say which way it failed.
 */
public class MalformedClientFrameException extends Exception {
    public MalformedClientFrameException(String message) {
        super(message, null, false, false); // no stack trace: a hostile sender must not make drops expensive
    }
}
