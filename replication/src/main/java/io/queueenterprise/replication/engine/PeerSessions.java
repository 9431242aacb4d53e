package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.crypto.EphemeralKey;
import io.queueenterprise.replication.session.PeerCredential;
import io.queueenterprise.replication.session.PeerIdentities;
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
 * leader; handshake frames are MACed under the cluster's peer credential and signed with the sender's own identity
 * key, each side contributes a nonce and an ephemeral X25519 key; then every frame is MACed under per-direction keys
 * derived from the credential and the X25519 secret, see {@link SessionCrypto}), heartbeats, and the timeouts that
 * drop a silent peer's session. Duty-cycle thread only.
 */
final class PeerSessions {
    private static final Logger LOG = LoggerFactory.getLogger(PeerSessions.class);
    static final long SESSION_TIMEOUT_NANOS = 3_000_000_000L;
    static final long CHALLENGE_RETRY_NANOS = 250_000_000L;

    private final EngineSettings settings;
    private final int self;
    private final PeerCredential credential;
    private final PeerIdentities identities;
    private final SecureRandom random = new SecureRandom();
    private final ControlFrames control;
    private final RoleController roles;
    private final PeerLink[] peers;
    private final QueueReplica[] queues;
    private final FollowerSession follower;
    private final HandshakeBody handshake = new HandshakeBody();
    private final HandshakeEncoder handshakeEncoder = new HandshakeEncoder();
    private final HeartbeatEncoder heartbeatEncoder = new HeartbeatEncoder();
    private final byte[] signatureScratch = new byte[HandshakeBody.SIGNATURE_LENGTH];
    private final byte[] nonceScratch = new byte[HandshakeBody.NONCE_LENGTH];
    private final byte[] ephemeralScratch = new byte[HandshakeBody.EPHEMERAL_LENGTH];
    /** Sessions established since start, with any peer (written here only, read by any thread). */
    private final AtomicLong established;
    /** Sessions closed since start because their peer's pin changed to a key they had not proved (any thread reads). */
    private final AtomicLong identitySessionsClosed;

    /** Sessions closed for a changed pin counted here only (handshake tests). */
    PeerSessions(EngineSettings settings, PeerCredential credential, PeerIdentities identities, ControlFrames control,
                 RoleController roles, PeerLink[] peers, QueueReplica[] queues, FollowerSession follower, AtomicLong established) {
        this(settings, credential, identities, control, roles, peers, queues, follower, established, new AtomicLong());
    }

    PeerSessions(EngineSettings settings, PeerCredential credential, PeerIdentities identities, ControlFrames control,
                 RoleController roles, PeerLink[] peers, QueueReplica[] queues, FollowerSession follower, AtomicLong established,
                 AtomicLong identitySessionsClosed) {
        this.identitySessionsClosed = identitySessionsClosed;
        this.settings = settings;
        this.self = settings.selfPosition();
        this.credential = credential;
        this.identities = identities;
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
            p.ephemeral = EphemeralKey.generate(random);
            byte[] ephemeral = p.ephemeral.publicKey();
            System.arraycopy(ephemeral, 0, p.initiatorEphemeral, 0, ephemeral.length);
            p.moveTo(PeerLink.State.CHALLENGING, "CHALLENGE sent");
            byte[] signature = identities.sign(SessionCrypto.signedChallenge(p.pendingSessionId, self, p.position, term,
                    p.initiatorNonce, p.initiatorEphemeral));
            handshakeEncoder.challenge(control.handshake(FrameType.CHALLENGE, term, p.pendingSessionId), p.initiatorNonce,
                    p.initiatorEphemeral, signature);
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
     * Responder (leader): checks the initiator's signature (the CHALLENGE is that peer's own, not another's under its
     * name), answers with its nonce, ephemeral key and signature over the transcript; the session starts with the
     * initiator's PROOF. A live session carries on meanwhile (anyone can replay a CHALLENGE); one seen lately is not
     * answered at all.
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
        handshake.initiatorNonce(nonceScratch);
        handshake.ephemeral(ephemeralScratch);
        handshake.signature(signatureScratch);
        if (!identities.verify(p.position, SessionCrypto.signedChallenge(frame.sessionId(), p.position, self, term,
                nonceScratch, ephemeralScratch), signatureScratch)) {
            return unauthenticated(p, "CHALLENGE");
        }
        EphemeralKey ephemeral = EphemeralKey.generate(random);
        byte[] shared = ephemeral.agree(ephemeralScratch);
        if (shared == null) {
            return unauthenticated(p, "CHALLENGE (degenerate ephemeral key)");
        }
        p.rememberChallenge(frame.sessionId());
        System.arraycopy(nonceScratch, 0, p.initiatorNonce, 0, nonceScratch.length);
        System.arraycopy(ephemeralScratch, 0, p.initiatorEphemeral, 0, ephemeralScratch.length);
        byte[] responderEphemeral = ephemeral.publicKey();
        System.arraycopy(responderEphemeral, 0, p.responderEphemeral, 0, responderEphemeral.length);
        wipe(p.sharedSecret);
        p.sharedSecret = shared;
        random.nextBytes(p.responderNonce);
        p.pendingSessionId = frame.sessionId();
        p.moveTo(p.established() ? PeerLink.State.ESTABLISHED_RESPONDING : PeerLink.State.RESPONDING, "CHALLENGE answered");
        byte[] signature = identities.sign(SessionCrypto.signedTranscript("responder", p.pendingSessionId, p.position, self,
                term, p.initiatorNonce, p.responderNonce, p.initiatorEphemeral, p.responderEphemeral));
        handshakeEncoder.challengeResponse(control.handshake(FrameType.CHALLENGE_RESPONSE, term, p.pendingSessionId),
                p.initiatorNonce, p.responderNonce, p.responderEphemeral, signature);
        control.sendHandshake(p, false);
        return null;
    }

    /**
     * Initiator (follower): checks the leader's signature over the transcript of its own CHALLENGE, signs it in turn,
     * and starts the session.
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
            return unauthenticated(p, "CHALLENGE_RESPONSE (another nonce)");
        }
        handshake.responderNonce(nonceScratch);
        handshake.ephemeral(ephemeralScratch);
        handshake.signature(signatureScratch);
        byte[] pin = identities.pinnedKey(p.position);
        byte[] signed = SessionCrypto.signedTranscript("responder", p.pendingSessionId, self, p.position,
                term, p.initiatorNonce, nonceScratch, p.initiatorEphemeral, ephemeralScratch);
        if (!identities.verify(p.position, signed, signatureScratch)) {
            return unauthenticated(p, "CHALLENGE_RESPONSE");
        }
        byte[] proved = signatureScratch.clone(); // kept for the session: what the peer proved
        byte[] shared = p.ephemeral.agree(ephemeralScratch);
        if (shared == null) {
            return unauthenticated(p, "CHALLENGE_RESPONSE (degenerate ephemeral key)");
        }
        System.arraycopy(nonceScratch, 0, p.responderNonce, 0, nonceScratch.length);
        System.arraycopy(ephemeralScratch, 0, p.responderEphemeral, 0, ephemeralScratch.length);
        byte[] signature = identities.sign(SessionCrypto.signedTranscript("initiator", p.pendingSessionId, self, p.position,
                term, p.initiatorNonce, p.responderNonce, p.initiatorEphemeral, p.responderEphemeral));
        handshakeEncoder.proof(control.handshake(FrameType.PROOF, term, p.pendingSessionId), signature);
        control.sendHandshake(p, false);
        establish(p, true, self, p.position, shared, now);
        remember(p, signed, proved, pin);
        for (QueueReplica q : queues) {
            q.sessionLost("new session");
            q.dropPart(); // a new session starts any large excerpt over
        }
        follower.sendHello(p, term);
        return null;
    }

    /** Responder (leader): the initiator's signature over the transcript checked, the new session replaces any old one. */
    DropReason onProof(PeerLink p, Frame frame, long now) throws MalformedFrameException {
        handshake.wrap(frame);
        if (roles.role() != NodeStatus.Role.LEADER || !p.awaitingProof() || frame.sessionId() != p.pendingSessionId) {
            return DropReason.UNEXPECTED;
        }
        handshake.signature(signatureScratch);
        byte[] pin = identities.pinnedKey(p.position);
        byte[] signed = SessionCrypto.signedTranscript("initiator", p.pendingSessionId, p.position, self,
                roles.term(), p.initiatorNonce, p.responderNonce, p.initiatorEphemeral, p.responderEphemeral);
        if (!identities.verify(p.position, signed, signatureScratch)) {
            return unauthenticated(p, "PROOF");
        }
        byte[] proved = signatureScratch.clone(); // kept for the session: what the peer proved
        byte[] shared = p.sharedSecret;
        p.sharedSecret = null;
        p.dropSession();
        establish(p, false, p.position, self, shared, now);
        remember(p, signed, proved, pin);
        return null;
    }

    /** The keys of both directions; this node signs with its own direction's key and verifies with the other's. */
    private void establish(PeerLink p, boolean initiating, int initiator, int responder, byte[] shared, long now) {
        SessionCrypto.FrameMac toResponder = SessionCrypto.sessionMac(credential, shared, SessionCrypto.Direction.INITIATOR_TO_RESPONDER,
                p.pendingSessionId, initiator, responder, p.initiatorNonce, p.responderNonce, p.initiatorEphemeral, p.responderEphemeral);
        SessionCrypto.FrameMac toInitiator = SessionCrypto.sessionMac(credential, shared, SessionCrypto.Direction.RESPONDER_TO_INITIATOR,
                p.pendingSessionId, initiator, responder, p.initiatorNonce, p.responderNonce, p.initiatorEphemeral, p.responderEphemeral);
        wipe(shared);
        p.ephemeral = null;
        p.txMac = initiating ? toResponder : toInitiator;
        p.rxMac = initiating ? toInitiator : toResponder;
        p.sessionId = p.pendingSessionId;
        p.moveTo(PeerLink.State.ESTABLISHED, "both signatures checked");
        p.txSequence = 0;
        p.rxSequence = 0;
        p.lastHeardNanos = now;
        p.lastHeartbeatSentNanos = 0;
        p.leaderClockEcho = 0; // nothing of this session's leader heard yet
        established.lazySet(established.get() + 1); // one writer thread
        if (LOG.isDebugEnabled()) {
            LOG.debug(settings.nodeId() + ": session " + p.sessionId + " with " + p.id + " (identity "
                    + identities.fingerprint(p.position) + ") established");
        }
    }

    /** What the peer proved in this session's handshake, for {@link #recheckIdentities} and the status. */
    private static void remember(PeerLink p, byte[] signed, byte[] signature, byte[] pin) {
        p.provenMessage = signed;
        p.provenSignature = signature;
        // the pin checked is the one read before verify; were it replaced in between, the recheck that follows sorts it out
        p.provenKey = pin;
    }

    /**
     * The pins changed (the peer-identities file): every live session whose peer is pinned now to a key other than the
     * one it proved is closed; the peer reconnects and must prove the pin. A session that proved no key (its peer was
     * unpinned) stays when the signature it gave in its handshake verifies under the new pin: it was that key all
     * along, and replication goes on without a blip. Duty-cycle thread, once per change of pins.
     *
     * @return sessions closed
     */
    int recheckIdentities() {
        int closed = 0;
        for (PeerLink p : peers) {
            if (p == null || !p.established()) {
                continue;
            }
            byte[] pin = identities.pinnedKey(p.position);
            if (pin == null || java.util.Arrays.equals(pin, p.provenKey)) {
                continue;
            }
            if (p.provenMessage != null && io.queueenterprise.crypto.IdentityKey.verify(pin, p.provenMessage, p.provenSignature)) {
                p.provenKey = pin;
                continue;
            }
            LOG.warn(settings.nodeId() + ": session with " + p.id + " closed: " + p.id + " is pinned now to identity "
                    + io.queueenterprise.crypto.IdentityKey.fingerprint(pin) + "..., but its session proved "
                    + (p.provenKey == null ? "another key (it was unpinned then)"
                    : io.queueenterprise.crypto.IdentityKey.fingerprint(p.provenKey) + "...")
                    + "; it must reconnect with the pinned key");
            closeSession(p);
            identitySessionsClosed.incrementAndGet();
            closed++;
        }
        return closed;
    }

    /** Drops the session with {@code p}; when {@code p} is the leader this node follows, its queues start over with it. */
    private void closeSession(PeerLink p) {
        p.dropSession();
        if (roles.role() == NodeStatus.Role.FOLLOWER && p.position == roles.leader()) {
            for (QueueReplica q : queues) {
                q.sessionLost("the leader's identity pin changed");
                q.dropPart();
            }
        }
    }

    /** The fingerprint of the key {@code p}'s live session proved; null without a session or when it proved none. */
    String provenFingerprint(PeerLink p) {
        return p.established() && p.provenKey != null ? io.queueenterprise.crypto.IdentityKey.fingerprint(p.provenKey) : null;
    }

    /**
     * A handshake frame that holds the peer credential but not the identity key of the node it names: an insider (a
     * node, or a stolen credential) speaking as another. Said at most once per 10 s per peer, naming the identity.
     */
    private DropReason unauthenticated(PeerLink p, String what) {
        long now = System.nanoTime();
        if (p.lastIdentityFailureLoggedNanos == 0 || now - p.lastIdentityFailureLoggedNanos > 10_000_000_000L) {
            p.lastIdentityFailureLoggedNanos = now;
            LOG.warn(settings.nodeId() + ": a " + what + " in the name of " + p.id + " is not signed by its identity key "
                    + identities.fingerprint(p.position) + "...: dropped (a holder of the peer credential speaking as another"
                    + " node, or a misconfigured identity)");
        }
        return DropReason.UNAUTHENTICATED;
    }

    private static void wipe(byte[] secret) {
        if (secret != null) {
            java.util.Arrays.fill(secret, (byte) 0);
        }
    }
}
