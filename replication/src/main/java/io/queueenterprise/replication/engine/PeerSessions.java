package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.session.PeerCredential;
import io.queueenterprise.replication.session.SessionCrypto;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameType;
import io.queueenterprise.replication.wire.HandshakeBody;
import io.queueenterprise.replication.wire.HandshakeEncoder;
import io.queueenterprise.replication.wire.HeartbeatEncoder;
import io.queueenterprise.replication.wire.MalformedFrameException;
import io.queueenterprise.replication.wire.RefusalBody;
import io.queueenterprise.replication.wire.RefusalReason;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The authenticated session with each peer ({@link PeerLink.State}): the handshake (a follower challenges its
 * leader, both prove the peer credential over both nonces, then every frame is MACed under a key derived from
 * them), heartbeats, and the timeouts that drop a silent peer's session. Duty-cycle thread only.
 */
final class PeerSessions {
    private static final Logger LOG = LoggerFactory.getLogger(PeerSessions.class);
    static final long SESSION_TIMEOUT_NANOS = 3_000_000_000L;
    static final long CHALLENGE_RETRY_NANOS = 250_000_000L;

    private final EngineSettings settings;
    private final int self;
    private final PeerCredential credential;
    private final SecureRandom random = new SecureRandom();
    private final ControlFrames control;
    private final RoleController roles;
    private final PeerLink[] peers;
    private final QueueReplica[] queues;
    private final FollowerSession follower;
    private final HandshakeBody handshake = new HandshakeBody();
    private final HandshakeEncoder handshakeEncoder = new HandshakeEncoder();
    private final HeartbeatEncoder heartbeatEncoder = new HeartbeatEncoder();
    private final byte[] proofScratch = new byte[HandshakeBody.PROOF_LENGTH];
    private final byte[] nonceScratch = new byte[HandshakeBody.NONCE_LENGTH];
    /** Sessions established since start, with any peer (written here only, read by any thread). */
    private final AtomicLong established;

    PeerSessions(EngineSettings settings, PeerCredential credential, ControlFrames control, RoleController roles,
                 PeerLink[] peers, QueueReplica[] queues, FollowerSession follower, AtomicLong established) {
        this.settings = settings;
        this.self = settings.selfPosition();
        this.credential = credential;
        this.control = control;
        this.roles = roles;
        this.peers = peers;
        this.queues = queues;
        this.follower = follower;
        this.established = established;
    }

    // ------------------------------------------------------------------------------------------------ upkeep

    /**
     * A follower's link to its leader: drops a silent session, re-sends a lost HELLO, and challenges (again) while
     * there is no session.
     */
    int followerLink(long now) {
        long term = roles.term();
        PeerLink p = peers[roles.leader()];
        int written = follower.pollWriters(p.established() ? p : null, term, now);
        if (p.established()) {
            if (now - p.lastHeardNanos > SESSION_TIMEOUT_NANOS) {
                LOG.info(settings.nodeId() + ": no frame from leader " + p.id + " for "
                        + SESSION_TIMEOUT_NANOS / 1_000_000 + " ms; reconnecting");
                p.dropSession();
                for (QueueReplica q : queues) {
                    q.sessionLost("session to the leader timed out");
                }
                return 1;
            }
            if (follower.helloDue(now)) {
                follower.sendHello(p, term); // the HELLO or its answer was lost (control frames are not retried forever)
                return written + 1;
            }
            return written;
        }
        if (now - p.challengeSentNanos >= CHALLENGE_RETRY_NANOS) {
            p.challengeSentNanos = now;
            p.pendingSessionId = random.nextLong() & Long.MAX_VALUE;
            random.nextBytes(p.initiatorNonce);
            p.moveTo(PeerLink.State.CHALLENGING, "CHALLENGE sent");
            handshakeEncoder.challenge(control.handshake(FrameType.CHALLENGE, term, p.pendingSessionId), p.initiatorNonce);
            control.sendHandshake(p, true); // lost or refused: retried after CHALLENGE_RETRY_NANOS
            return written + 1;
        }
        return written;
    }

    /** Heartbeats every established session; a leader drops a follower it has not heard from. */
    int heartbeats(long now) {
        int work = 0;
        for (PeerLink p : peers) {
            if (p != null && p.established()
                    && (p.heartbeatOwed || now - p.lastHeartbeatSentNanos >= ReplicationAgent.HEARTBEAT_NANOS)) {
                sendHeartbeat(p, now);
                work++;
            }
            if (p != null && p.established() && roles.role() == NodeStatus.Role.LEADER
                    && now - p.lastHeardNanos > SESSION_TIMEOUT_NANOS) {
                p.dropSession();
            }
        }
        return work;
    }

    /** A leader's heartbeat carries each queue's last and quorum index (followers bound replicated reads by it). */
    void sendHeartbeat(PeerLink p, long now) {
        p.lastHeartbeatSentNanos = now;
        boolean leading = roles.role() == NodeStatus.Role.LEADER;
        // A leader sends its clock; a follower echoes the latest leader clock it received (the leader's lease).
        HeartbeatEncoder out = heartbeatEncoder.begin(control.session(FrameType.HEARTBEAT, roles.term(), p),
                leading ? now : p.leaderClockEcho, leading ? queues.length : 0);
        if (leading) {
            for (QueueReplica q : queues) {
                out.queue(q.lastIndex, q.quorumIndex);
                p.progress[q.position].quorumSent = q.quorumIndex;
            }
        }
        p.heartbeatOwed = !control.sendSession(p) && leading && p.established();
    }

    // ------------------------------------------------------------------------------------------------ handshake

    /**
     * Responder (leader): answers with its nonce and proof; the session starts with the initiator's PROOF. A live
     * session carries on meanwhile (anyone can replay a CHALLENGE); one seen lately is not answered at all.
     *
     * @return the reason it was dropped, or null when it was answered (or refused: this node does not lead)
     */
    DropReason onChallenge(PeerLink p, Frame frame) throws MalformedFrameException {
        handshake.wrap(frame);
        long term = roles.term();
        if (roles.role() != NodeStatus.Role.LEADER) {
            control.refuse(p, term, frame.sessionId(), RefusalReason.NOT_LEADER, RefusalBody.NO_QUEUE, term,
                    settings.nodeId() + " is " + roles.role());
            return null;
        }
        if (p.challengeAnswered(frame.sessionId())) {
            // Replayed: answering would replace the nonces of a handshake in hand, failing its PROOF.
            return DropReason.REPLAYED;
        }
        p.rememberChallenge(frame.sessionId());
        handshake.initiatorNonce(p.initiatorNonce);
        random.nextBytes(p.responderNonce);
        p.pendingSessionId = frame.sessionId();
        p.moveTo(p.established() ? PeerLink.State.ESTABLISHED_RESPONDING : PeerLink.State.RESPONDING, "CHALLENGE answered");
        byte[] proof = SessionCrypto.proof(credential, "responder", p.pendingSessionId, p.position, self, term,
                p.initiatorNonce, p.responderNonce);
        handshakeEncoder.challengeResponse(control.handshake(FrameType.CHALLENGE_RESPONSE, term, p.pendingSessionId),
                p.initiatorNonce, p.responderNonce, proof);
        control.sendHandshake(p, false);
        return null;
    }

    /**
     * Initiator (follower): checks the leader's proof over its own nonce, proves itself, and starts the session.
     *
     * @return the reason it was dropped, or null when the session started
     */
    DropReason onChallengeResponse(PeerLink p, Frame frame, long now) throws MalformedFrameException {
        handshake.wrap(frame);
        long term = roles.term();
        if (roles.role() != NodeStatus.Role.FOLLOWER || p.position != roles.leader() || frame.sessionId() != p.pendingSessionId
                || p.state() != PeerLink.State.CHALLENGING) {
            // Only the answer to the CHALLENGE in hand: one replayed into an established session would start the same
            // session over (same nonces, same key) with its sequences at zero, opening it to replayed frames.
            return DropReason.UNEXPECTED;
        }
        handshake.initiatorNonce(nonceScratch);
        if (!java.util.Arrays.equals(nonceScratch, p.initiatorNonce)) {
            return DropReason.UNAUTHENTICATED;
        }
        handshake.responderNonce(p.responderNonce);
        handshake.proof(proofScratch);
        byte[] expected = SessionCrypto.proof(credential, "responder", p.pendingSessionId, self, p.position, term,
                p.initiatorNonce, p.responderNonce);
        if (!SessionCrypto.proofEquals(expected, proofScratch)) {
            return DropReason.UNAUTHENTICATED;
        }
        byte[] proof = SessionCrypto.proof(credential, "initiator", p.pendingSessionId, self, p.position, term,
                p.initiatorNonce, p.responderNonce);
        handshakeEncoder.proof(control.handshake(FrameType.PROOF, term, p.pendingSessionId), proof);
        control.sendHandshake(p, false);
        establish(p, true, self, p.position, now);
        for (QueueReplica q : queues) {
            q.sessionLost("new session");
            q.dropPart(); // a new session starts any large excerpt over
        }
        follower.sendHello(p, term);
        return null;
    }

    /** Responder (leader): the initiator's proof checked, the new session replaces any old one. */
    DropReason onProof(PeerLink p, Frame frame, long now) throws MalformedFrameException {
        handshake.wrap(frame);
        if (roles.role() != NodeStatus.Role.LEADER || !p.awaitingProof() || frame.sessionId() != p.pendingSessionId) {
            return DropReason.UNEXPECTED;
        }
        handshake.proof(proofScratch);
        byte[] expected = SessionCrypto.proof(credential, "initiator", p.pendingSessionId, p.position, self, roles.term(),
                p.initiatorNonce, p.responderNonce);
        if (!SessionCrypto.proofEquals(expected, proofScratch)) {
            return DropReason.UNAUTHENTICATED;
        }
        p.dropSession();
        establish(p, false, p.position, self, now);
        return null;
    }

    /** Both proofs checked: this node signs with its own direction's key and verifies with the other's. */
    private void establish(PeerLink p, boolean initiating, int initiator, int responder, long now) {
        SessionCrypto.FrameMac toResponder = SessionCrypto.sessionMac(credential, SessionCrypto.Direction.INITIATOR_TO_RESPONDER,
                p.pendingSessionId, initiator, responder, p.initiatorNonce, p.responderNonce);
        SessionCrypto.FrameMac toInitiator = SessionCrypto.sessionMac(credential, SessionCrypto.Direction.RESPONDER_TO_INITIATOR,
                p.pendingSessionId, initiator, responder, p.initiatorNonce, p.responderNonce);
        p.txMac = initiating ? toResponder : toInitiator;
        p.rxMac = initiating ? toInitiator : toResponder;
        p.sessionId = p.pendingSessionId;
        p.moveTo(PeerLink.State.ESTABLISHED, "both proofs checked");
        p.txSequence = 0;
        p.rxSequence = 0;
        p.lastHeardNanos = now;
        p.lastHeartbeatSentNanos = 0;
        p.leaderClockEcho = 0; // nothing of this session's leader heard yet
        established.lazySet(established.get() + 1); // one writer thread
    }
}
