package io.queueenterprise.remote;

import io.queueenterprise.queue.QueueException;
import io.queueenterprise.protocol.client.ClientRefusal;

/**
 * A remote queue operation failed; {@link #reason()} says how, {@link #mayBeAppended()} whether the excerpt it was
 * about may be (or become) in the queue anyway, so the caller knows whether a retry with a new write could duplicate.
 */
public class RemoteQueueException extends QueueException {
    private static final long serialVersionUID = 1L;

    /** What went wrong. */
    public enum Reason {
        /** A builder setting is unusable (the message names it). */
        BAD_CONFIGURATION,
        /** The client credential does not match the cluster's (either side's proof failed). */
        UNAUTHENTICATED,
        /** No node of the given addresses led the queue before the time ran out. */
        NO_LEADER,
        /** The node refused the request for a reason retrying cannot fix ({@link #refusal()} says which). */
        REFUSED,
        /** The excerpt is larger than the node takes from a client. */
        TOO_LARGE,
        /** The publication to the leader stayed back-pressured for the whole back-pressure timeout. */
        BACK_PRESSURE,
        /** The append window stayed full (count or bytes) for the back-pressure timeout: this write was not sent. */
        WINDOW_FULL,
        /** No acknowledgement within the ack timeout. */
        ACK_TIMEOUT,
        /** The queue's descriptor does not fit the client's keys (see the cause). */
        DESCRIPTOR,
        /** No replica served a remote tail before the time ran out (each one's answer is in the message). */
        NO_REPLICA,
        /** The client was closed. */
        CLOSED
    }

    private final Reason reason;
    private final ClientRefusal refusal;
    private final boolean mayBeAppended;

    public RemoteQueueException(String queue, Reason reason, ClientRefusal refusal, boolean mayBeAppended, String message,
                                Throwable cause) {
        super(queue, reason + (refusal == null ? "" : " (" + refusal + ")") + ": " + message
                + (mayBeAppended ? " [the excerpt may still be, or become, in the queue]" : " [nothing was appended]"), cause);
        this.reason = reason;
        this.refusal = refusal;
        this.mayBeAppended = mayBeAppended;
    }

    public RemoteQueueException(String queue, Reason reason, String message) {
        this(queue, reason, null, false, message, null);
    }

    public Reason reason() {
        return reason;
    }

    /** The node's refusal when {@link #reason()} is REFUSED (or the last one seen), else null. */
    public ClientRefusal refusal() {
        return refusal;
    }

    /**
     * True when the excerpt was sent and may be in the queue (appended by a leader that did not acknowledge in time:
     * it becomes durable if replicated, or is quarantined if that leader loses its term first). False: nothing of
     * this write was appended.
     */
    public boolean mayBeAppended() {
        return mayBeAppended;
    }
}
