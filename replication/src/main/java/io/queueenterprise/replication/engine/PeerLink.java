package io.queueenterprise.replication.engine;

import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.crypto.EphemeralKey;
import io.queueenterprise.replication.session.SessionCrypto;
import org.agrona.ExpandableArrayBuffer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Another replica: where to send to it, and the authenticated session with it. Duty-cycle thread only. */
final class PeerLink {
    private static final Logger LOG = LoggerFactory.getLogger(PeerLink.class);
    final int position;
    final String id;
    /**
     * Where frames to this peer go: its Aeron publication ({@link PeerChannels}), replaced when the node restarts its
     * embedded Aeron client and driver; null while there is no channel to it (its name does not resolve yet).
     */
    FrameSink sink;

    /**
     * Where the session with this peer stands. A follower initiates (CHALLENGE, then PROOF), its leader responds
     * (CHALLENGE_RESPONSE); see {@link PeerSessions}. Transitions are logged at DEBUG.
     */
    enum State {
        /** No session and no handshake in hand: at start, after a timeout, a role change or a transport restart. */
        DISCONNECTED,
        /** Initiator: CHALLENGE sent, the responder's CHALLENGE_RESPONSE awaited (the CHALLENGE is re-sent). */
        CHALLENGING,
        /** Responder: a CHALLENGE answered, the initiator's PROOF awaited. */
        RESPONDING,
        /** Both proofs checked: session frames are taken and sent, under the session key. */
        ESTABLISHED,
        /**
         * Responder with a session: a new CHALLENGE was answered; the current session carries on until the new
         * one's PROOF arrives (a CHALLENGE alone, which anyone can replay, does not end a session).
         */
        ESTABLISHED_RESPONDING
    }

    private State state = State.DISCONNECTED;
    long sessionId;
    /** MACs what this node sends in the session: its own direction's key ({@link SessionCrypto.Direction}). */
    SessionCrypto.FrameMac txMac;
    /** Verifies what the peer sends in the session: the other direction's key, so a reflected frame fails it. */
    SessionCrypto.FrameMac rxMac;
    long txSequence;
    long rxSequence;
    long lastHeardNanos;
    long lastHeartbeatSentNanos;
    /**
     * Follower side: the leader's clock from the latest leader HEARTBEAT of this session (0: none yet), echoed in this
     * node's own HEARTBEATs: the leader's lease counts from it ({@link LeaderLease}).
     */
    long leaderClockEcho;
    /**
     * Leader side: a HEARTBEAT to this follower was lost to back-pressure. It is offered again every cycle, and no DATA
     * goes to the follower before it: under a saturating stream, DATA would take every free byte of the publication
     * and the heartbeats that carry the leader's clock (its lease) would never get through.
     */
    boolean heartbeatOwed;

    // handshake in progress
    long pendingSessionId;
    final byte[] initiatorNonce = new byte[32];
    final byte[] responderNonce = new byte[32];
    /** Both sides' ephemeral X25519 public keys of the handshake in hand. */
    final byte[] initiatorEphemeral = new byte[EphemeralKey.LENGTH];
    final byte[] responderEphemeral = new byte[EphemeralKey.LENGTH];
    /** This node's ephemeral key pair of the handshake in hand; dropped once the session keys are derived. */
    EphemeralKey ephemeral;
    /** Responder: the X25519 secret of the CHALLENGE answered, kept until its PROOF (then wiped). */
    byte[] sharedSecret;
    long challengeSentNanos;
    /**
     * What the peer signed in the handshake of the session in force (its transcript and signature), and the pinned key
     * it was checked against (null: the peer was unpinned then). When a pin appears or changes, the session stays only
     * if that signature verifies under the new pin ({@link PeerSessions#recheckIdentities}). Set once per handshake.
     */
    byte[] provenMessage;
    byte[] provenSignature;
    byte[] provenKey;
    /** When a handshake frame in this peer's name last failed its signature was logged (rate limit); 0: never. */
    long lastIdentityFailureLoggedNanos;

    /**
     * Responder: the session ids of the last {@value #REMEMBERED_CHALLENGES} CHALLENGEs answered. An initiator draws a
     * fresh id for every CHALLENGE it sends, so one seen again is a replay: dropped, not answered, and the handshake
     * in hand (its nonces) is left alone.
     */
    static final int REMEMBERED_CHALLENGES = 64;
    private final long[] answeredChallenges = new long[REMEMBERED_CHALLENGES];
    private int challengesAnswered;

    /** Leader side: this follower's progress per queue. */
    final FollowerQueue[] progress;

    PeerLink(int position, String id, FrameSink sink, int queueCount) {
        this.position = position;
        this.id = id;
        this.sink = sink;
        this.progress = new FollowerQueue[queueCount];
        for (int q = 0; q < queueCount; q++) {
            progress[q] = new FollowerQueue();
        }
    }

    State state() {
        return state;
    }

    /** A session is established once both proofs checked; only then are session frames taken or sent. */
    boolean established() {
        return state == State.ESTABLISHED || state == State.ESTABLISHED_RESPONDING;
    }

    /** A CHALLENGE was answered: this responder waits for its PROOF. */
    boolean awaitingProof() {
        return state == State.RESPONDING || state == State.ESTABLISHED_RESPONDING;
    }

    /** Whether a CHALLENGE for {@code challengeSessionId} was answered lately (a replay). */
    boolean challengeAnswered(long challengeSessionId) {
        int remembered = Math.min(challengesAnswered, REMEMBERED_CHALLENGES);
        for (int i = 0; i < remembered; i++) {
            if (answeredChallenges[i] == challengeSessionId) {
                return true;
            }
        }
        return false;
    }

    void rememberChallenge(long challengeSessionId) {
        answeredChallenges[challengesAnswered++ % REMEMBERED_CHALLENGES] = challengeSessionId;
        if (challengesAnswered == 2 * REMEMBERED_CHALLENGES) {
            challengesAnswered = REMEMBERED_CHALLENGES; // keeps the count from overflowing; the ring is full either way
        }
    }

    void moveTo(State next, String why) {
        if (next != state && LOG.isDebugEnabled()) {
            LOG.debug("peer " + id + ": " + state + " -> " + next + " (" + why + ")");
        }
        state = next;
    }

    /** The next upkeep of this link sends a CHALLENGE at once rather than after the retry interval. */
    void challengeAtOnce(long now) {
        challengeSentNanos = now - PeerSessions.CHALLENGE_RETRY_NANOS;
    }

    /** Forgets the session (peer gone, term changed, new session): tailers closed, progress reset. */
    void dropSession() {
        moveTo(State.DISCONNECTED, "session dropped");
        txMac = null;
        rxMac = null;
        sessionId = 0;
        heartbeatOwed = false;
        provenMessage = null;
        provenSignature = null;
        provenKey = null;
        for (FollowerQueue f : progress) {
            f.reset();
        }
    }

    /** One follower's progress on one queue, as its leader tracks it. */
    static final class FollowerQueue {
        ReplicaStore.RawTailer tailer;
        boolean streaming;
        /** A changed descriptor not yet offered to this follower: no more of the queue's DATA until it is. */
        boolean descriptorOwed;
        /**
         * The descriptor bytes last offered to this follower (null: none yet, or "the queue has none"). Per follower:
         * one follower's HELLO answered with a new descriptor says nothing of what another follower was sent.
         */
        byte[] sentDescriptor;
        long durableIndex = -1;
        QueueStatus.State state = QueueStatus.State.STOPPED;
        /** A DATA frame built but refused by back-pressure: offered again before anything new is read. */
        final ExpandableArrayBuffer pending = new ExpandableArrayBuffer(64 * 1024 + 1024);
        int pendingLength;
        /** The sequence the pending frame is stamped and signed with; 0: not yet. */
        long pendingSequence;
        /** The quorum index last sent to this follower (in DATA or HEARTBEAT). */
        long quorumSent = -1;
        /** The last index put in a frame for this follower. */
        long sentIndex = -1;
        /**
         * An excerpt too large for a DATA batch, being sent in EXCERPT_PART pieces: its length (0: none) and how much
         * was sent. Its bytes stay in {@link #tailer}'s array, which is not read again until the last piece is out.
         */
        int partTotal;
        int partSent;
        long partIndex = -1;
        /**
         * The lease's checkpoint ({@link LeaderLease}): the last index of a batch offered at {@link #echoSentNanos}
         * (this leader's clock); an ACK covering it proves the follower was at this term after then, as a HEARTBEAT's
         * echo does, without waiting behind data for a heartbeat. -1: none outstanding.
         */
        long echoIndex = -1;
        long echoSentNanos;

        void reset() {
            if (tailer != null) {
                tailer.close();
                tailer = null;
            }
            streaming = false;
            descriptorOwed = false;
            sentDescriptor = null;
            pendingLength = 0;
            sentIndex = -1;
            quorumSent = -1;
            partTotal = 0;
            partSent = 0;
            partIndex = -1;
            echoIndex = -1;
            if (state != QueueStatus.State.BEHIND_RETENTION) {
                state = QueueStatus.State.STOPPED;
            }
        }
    }
}
