package io.queueenterprise.replication.client;

/** What a node counts about remote tails ({@link ClientGateway#tailCount}). */
public enum TailCounter {
    /** Tails opened (a TAIL_OPEN that was not refused). */
    OPENED,
    /** Excerpts sent whole. */
    EXCERPTS_SENT,
    /** Envelope bytes sent. */
    BYTES_SENT,
    /** Offers of a TAIL_DATA that the client's reply channel refused (back-pressure: the client is not draining). */
    BACK_PRESSURED_OFFERS,
    /** Tails ended SLOW_CONSUMER: back-pressured for longer than the node waits. */
    SLOW_CONSUMERS_CLOSED
}
