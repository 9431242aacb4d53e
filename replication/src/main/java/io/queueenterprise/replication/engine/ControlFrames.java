package io.queueenterprise.replication.engine;

import io.queueenterprise.protocol.transport.EmbeddedTransport;
import io.aeron.Publication;
import io.queueenterprise.replication.session.SessionCrypto;
import io.queueenterprise.replication.wire.FrameEncoder;
import io.queueenterprise.replication.wire.FrameType;
import io.queueenterprise.replication.wire.RefusalEncoder;
import io.queueenterprise.replication.wire.RefusalReason;
import org.agrona.ExpandableArrayBuffer;

/**
 * Builds, MACs and offers the node's control frames (handshake, HELLO, DESCRIPTOR, ACK, HEARTBEAT, REFUSAL) in one
 * reusable buffer. Control frames are small and rare: under back-pressure they are offered a bounded number of
 * times, driving the media driver between tries, then dropped; the protocol recovers (acks and heartbeats repeat,
 * HELLO is re-sent, a lost descriptor times the session out). DATA batches do not come here: they wait for their
 * publication in their follower's own buffer. Duty-cycle thread only.
 */
final class ControlFrames {
    private static final int OFFER_ATTEMPTS = 100;

    private final int self;
    private final SessionCrypto.FrameMac handshakeMac;
    private final ExpandableArrayBuffer tx = new ExpandableArrayBuffer(64 * 1024);
    private final FrameEncoder encoder = new FrameEncoder();
    private final RefusalEncoder refusal = new RefusalEncoder();
    /** Invoked between offers under back-pressure. */
    private final EmbeddedTransport transport;

    ControlFrames(int self, SessionCrypto.FrameMac handshakeMac, EmbeddedTransport transport) {
        this.self = self;
        this.handshakeMac = handshakeMac;
        this.transport = transport;
    }

    /** Begins a session frame to {@code p} with the session's next sequence; finish with {@link #sendSession}. */
    FrameEncoder session(FrameType type, long term, PeerLink p) {
        return encoder.begin(tx, 0, type, self, term, p.sessionId, ++p.txSequence);
    }

    /** MACs the frame begun by {@link #session} under this node's direction of the session key and offers it. */
    /** @return whether the frame was offered to the publication (false: lost to back-pressure or no connection) */
    boolean sendSession(PeerLink p) {
        int length = encoder.finish();
        p.txMac.sign(tx, 0, length);
        return offer(p, length);
    }

    /** Begins a handshake frame (sequence 0) for session {@code sessionId}; finish with {@link #sendHandshake}. */
    FrameEncoder handshake(FrameType type, long term, long sessionId) {
        return encoder.begin(tx, 0, type, self, term, sessionId, 0);
    }

    /** MACs the frame begun by {@link #handshake} under the handshake key and offers it; {@code once}: no retry. */
    void sendHandshake(PeerLink p, boolean once) {
        int length = encoder.finish();
        handshakeMac.sign(tx, 0, length);
        if (p.publication == null) {
            return; // no channel to this peer yet (its name does not resolve): as if lost
        }
        if (once) {
            p.publication.offer(tx, 0, length); // lost or refused: its sender retries on its own timer
        } else {
            offer(p, length);
        }
    }

    /**
     * A typed refusal: in the session when there is one, else MACed under the handshake key for the session the
     * refused frame named ({@code sessionOfRefusedFrame}).
     */
    void refuse(PeerLink p, long term, long sessionOfRefusedFrame, RefusalReason reason, int queue, long detail, String message) {
        boolean session = p.established();
        refusal.encode(encoder.begin(tx, 0, FrameType.REFUSAL, self, term, session ? p.sessionId : sessionOfRefusedFrame,
                session ? ++p.txSequence : 0), reason, queue, detail, message);
        int length = encoder.finish();
        (session ? p.txMac : handshakeMac).sign(tx, 0, length);
        offer(p, length);
    }

    private boolean offer(PeerLink p, int length) {
        if (p.publication == null) {
            return false; // no channel to this peer yet (its name does not resolve): as if lost
        }
        for (int attempt = 0; attempt < OFFER_ATTEMPTS; attempt++) {
            long result = p.publication.offer(tx, 0, length);
            if (result > 0) {
                return true;
            }
            if (result == Publication.NOT_CONNECTED || result == Publication.CLOSED) {
                return false;
            }
            transport.invoke();
        }
        return false;
    }
}
