package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.session.PeerCredential;
import io.queueenterprise.replication.session.SessionCrypto;

import java.util.Arrays;

/**
 * The established peer session the session unit tests ({@link LeaderSessionTest}, {@link FollowerSessionTest}) run
 * in: fixed ids, term, session id, nonces, ephemeral keys and X25519 secret, the keys of each direction derived as the handshake would.
 */
final class TestSession implements AutoCloseable {
    static final long TERM = 3;
    static final long SESSION = 77;
    static final int LEADER = 0;
    static final int FOLLOWER = 1;

    private final PeerCredential credential = PeerCredential.of(new byte[32]);
    private final byte[] initiatorNonce = filled(1);
    private final byte[] responderNonce = filled(2);

    /** The session MAC of {@code direction} (the follower initiates, the leader responds). */
    SessionCrypto.FrameMac mac(SessionCrypto.Direction direction) {
        return SessionCrypto.sessionMac(credential, filled(3), direction, SESSION, FOLLOWER, LEADER, initiatorNonce,
                responderNonce, filled(4), filled(5));
    }

    /** Puts {@code peer} in this session, this side signing what it sends to it in direction {@code tx}. */
    void establish(PeerLink peer, SessionCrypto.Direction tx) {
        peer.sessionId = SESSION;
        peer.txMac = mac(tx);
        peer.moveTo(PeerLink.State.ESTABLISHED, "test");
    }

    /** The control frames of node {@code self} (no transport: a refused offer is not retried). */
    ControlFrames control(int self) {
        return new ControlFrames(self, SessionCrypto.handshakeMac(credential), null);
    }

    @Override
    public void close() {
        credential.close();
    }

    private static byte[] filled(int value) {
        byte[] bytes = new byte[32];
        Arrays.fill(bytes, (byte) value);
        return bytes;
    }
}
