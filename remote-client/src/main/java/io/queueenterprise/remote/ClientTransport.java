package io.queueenterprise.remote;

import org.agrona.DirectBuffer;

import java.net.InetSocketAddress;

/**
 * What the client's protocol logic (handshake, append, tail) needs of the network, and nothing more: a link to one
 * node to offer frames on, and the frames nodes sent back. {@link AeronClientTransport} is the real one (Aeron over
 * UDP); a unit test plays the nodes behind a fake one. Driven by the client's one thread.
 *
 * <p>Offer results follow Aeron's {@code Publication.offer}: a positive position when sent, else
 * {@code Publication.NOT_CONNECTED}, {@code BACK_PRESSURED}, {@code ADMIN_ACTION}, {@code CLOSED} or
 * {@code MAX_POSITION_EXCEEDED}.
 */
interface ClientTransport extends AutoCloseable {

    /** Takes one frame a node sent; false: not now (the same frame is offered again on a later poll). */
    @FunctionalInterface
    interface FrameHandler {
        boolean onFrame(DirectBuffer buffer, int offset, int length);
    }

    /** A link to one node: frames offered on it go to that node. */
    interface Link {
        /** Whether the node is there to take frames (a handshake waits for it). */
        boolean isConnected();

        /** Offers one whole frame; see the class comment for the result. */
        long offer(DirectBuffer buffer, int offset, int length);

        /** The largest frame this link carries in one message. */
        int maxMessageLength();

        /** The largest frame this link sends in one datagram, unfragmented (Aeron's {@code maxPayloadLength}). */
        int maxPayloadLength();

        void close();
    }

    /** Opens a link to {@code node}'s client endpoint (connected later, or never: see {@link Link#isConnected()}). */
    Link connect(InetSocketAddress node);

    /** Drives the transport once and hands at most {@code limit} received frames to {@code handler}; the work done. */
    int poll(FrameHandler handler, int limit);

    /** Where nodes send their answers (the CONNECT frame names it). */
    String replyHost();

    int replyPort();

    /** Closes every link and what the transport owns (never an application's own Aeron client). */
    @Override
    void close();
}
