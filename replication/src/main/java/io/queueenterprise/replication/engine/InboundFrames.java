package io.queueenterprise.replication.engine;

import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.Header;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.session.SessionCrypto;
import io.queueenterprise.replication.wire.AckBody;
import io.queueenterprise.replication.wire.DataBody;
import io.queueenterprise.replication.wire.DescriptorBody;
import io.queueenterprise.replication.wire.ExcerptPartBody;
import io.queueenterprise.replication.wire.Frame;
import io.queueenterprise.replication.wire.FrameType;
import io.queueenterprise.replication.wire.HeartbeatBody;
import io.queueenterprise.replication.wire.HelloBody;
import io.queueenterprise.replication.wire.MalformedFrameException;
import io.queueenterprise.replication.wire.RefusalBody;
import io.queueenterprise.replication.wire.RefusalReason;
import org.agrona.DirectBuffer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every frame the subscription delivers: checked, then handed to the handshake ({@link PeerSessions}), the leader's
 * side ({@link LeaderSession}) or the follower's ({@link FollowerSession}) by type and role.
 *
 * <p>Who may speak: every frame is MACed; handshake frames under a key derived from the peer credential, all later
 * frames under a per-session, per-direction key derived from both sides' nonces. A frame is checked in this order,
 * and dropped and counted (per reason and type) at the first failure: its version, decodable header, known peer, MAC (handshake or session key), session id,
 * increasing sequence, term equal to this node's (lower: refused as stale; higher: refused, since only the admin
 * endpoint moves terms), then a decodable body. DATA batches are MACed too: one HMAC per batch of up to 64 KiB
 * costs about a microsecond plus ~1 ns/byte here, and without it anyone who can send UDP to the port could make a
 * follower store arbitrary bytes at an index (a plain queue cannot detect that at all, an encrypted one only when a
 * reader fails); the batch amortises the cost over its excerpts. Duty-cycle thread only.
 */
final class InboundFrames implements ControlledFragmentHandler {
    private static final Logger LOG = LoggerFactory.getLogger(InboundFrames.class);

    private final EngineSettings settings;
    private final int self;
    private final SessionCrypto.FrameMac handshakeMac;
    private final DropCounters drops;
    private final ControlFrames control;
    private final RoleController roles;
    private final PeerSessions sessions;
    private final LeaderSession leaderSession;
    private final FollowerSession follower;
    private final PeerLink[] peers;
    private final QueueReplica[] queues;

    private final Frame frame = new Frame();
    private final HelloBody hello = new HelloBody();
    private final DescriptorBody descriptor = new DescriptorBody();
    private final DataBody data = new DataBody();
    private final ExcerptPartBody part = new ExcerptPartBody();
    private final AckBody ack = new AckBody();
    private final HeartbeatBody heartbeat = new HeartbeatBody();
    private final RefusalBody refusal = new RefusalBody();
    private RefusalReason lastRefusalLogged;
    private long lastRefusalLoggedNanos;
    private long lastVersionLoggedNanos;

    InboundFrames(EngineSettings settings, SessionCrypto.FrameMac handshakeMac, DropCounters drops, ControlFrames control,
                  RoleController roles, PeerSessions sessions, LeaderSession leaderSession, FollowerSession follower,
                  PeerLink[] peers, QueueReplica[] queues) {
        this.settings = settings;
        this.self = settings.selfPosition();
        this.handshakeMac = handshakeMac;
        this.drops = drops;
        this.control = control;
        this.roles = roles;
        this.sessions = sessions;
        this.leaderSession = leaderSession;
        this.follower = follower;
        this.peers = peers;
        this.queues = queues;
    }

    /**
     * One frame from the subscription. ABORT leaves it there, to be read again next cycle: a follower's writer had no
     * room for it (back-pressure; see {@link FollowerSession}).
     */
    @Override
    public Action onFragment(DirectBuffer buffer, int offset, int length, Header header) {
        // Checked and read where Aeron delivered it (its term buffer, or its assembler's buffer for a frame that came in
        // fragments), never copied first: the media driver runs on this thread (INVOKER), so those bytes cannot change
        // while this handler runs, and what is verified is what is then handed on. A follower copies an excerpt once,
        // into its writer's ring (QueueWriter), only after the MAC below verified it.
        drops.handling(null);
        try {
            frame.wrap(buffer, offset, length);
        } catch (MalformedFrameException e) {
            if ("version".equals(e.field()) && Frame.earlierVersion(buffer, offset, length)) {
                drops.increment(DropReason.UNSUPPORTED_VERSION);
                logVersion(buffer, offset);
            } else {
                drops.increment(DropReason.MALFORMED);
            }
            return Action.CONTINUE;
        }
        drops.handling(frame.type());
        int sender = frame.sender();
        if (sender >= peers.length || sender == self) {
            drops.increment(DropReason.UNKNOWN_PEER);
            return Action.CONTINUE;
        }
        PeerLink p = peers[sender];
        drops.handlingPeer(sender);
        long previousSequence = p.rxSequence;
        FrameType type = frame.type();
        boolean handshakeFrame = type == FrameType.CHALLENGE || type == FrameType.CHALLENGE_RESPONSE || type == FrameType.PROOF;
        boolean refusalBeforeSession = type == FrameType.REFUSAL && !(p.established() && frame.sessionId() == p.sessionId);
        if (handshakeFrame || refusalBeforeSession) {
            if (!handshakeMac.verify(frame)) {
                drops.increment(DropReason.UNAUTHENTICATED);
                return Action.CONTINUE;
            }
        } else {
            if (!p.established() || frame.sessionId() != p.sessionId) {
                drops.increment(impersonation(sender, DropReason.UNKNOWN_SESSION));
                return Action.CONTINUE;
            }
            if (!p.rxMac.verify(frame)) {
                drops.increment(impersonation(sender, DropReason.BAD_MAC));
                return Action.CONTINUE;
            }
            if (frame.sequence() <= p.rxSequence) {
                drops.increment(DropReason.REPLAYED);
                return Action.CONTINUE;
            }
            p.rxSequence = frame.sequence();
        }
        long term = roles.term();
        if (frame.term() != term) {
            if (frame.term() < term) {
                drops.increment(DropReason.STALE_TERM);
                // No refusal for a refusal, nor for an old handshake frame of a peer whose session at this term is
                // live (a replay: the peer knows the term), which would make every replayed copy send a frame.
                if (type != FrameType.REFUSAL && !(handshakeFrame && p.established())) {
                    control.refuse(p, term, frame.sessionId(), RefusalReason.STALE_TERM, RefusalBody.NO_QUEUE, term,
                            "this node is at term " + term);
                }
            } else {
                drops.increment(DropReason.TERM_AHEAD); // only the admin endpoint moves this node's term
            }
            return Action.CONTINUE;
        }
        try {
            if (!dispatch(p, type, term)) {
                p.rxSequence = previousSequence; // read again next cycle: not a replay
                p.lastHeardNanos = System.nanoTime(); // the leader is talking; this node is not listening yet
                return Action.ABORT;
            }
        } catch (MalformedFrameException e) {
            drops.increment(DropReason.MALFORMED);
        }
        return Action.CONTINUE;
    }

    /**
     * A session frame is not of the session of the sender it names, or fails its MAC. The sender field is bound to an
     * identity: that position's session keys are known to this node and that peer's identity alone (X25519 in the
     * handshake), so such a frame is dropped either way. Did another established peer send it on its own session
     * under that name? Tried only on this failure path, and a MAC only where the session id is another live session's,
     * so that the counter and the log name who really sent it.
     *
     * @param otherwise the reason when no other session's key verifies it
     */
    private DropReason impersonation(int claimed, DropReason otherwise) {
        for (PeerLink other : peers) {
            if (other != null && other.position != claimed && other.established() && frame.sessionId() == other.sessionId
                    && other.rxMac.verify(frame)) {
                drops.handlingPeer(other.position);
                long now = System.nanoTime();
                if (other.lastIdentityFailureLoggedNanos == 0 || now - other.lastIdentityFailureLoggedNanos > 10_000_000_000L) {
                    other.lastIdentityFailureLoggedNanos = now;
                    LOG.warn(settings.nodeId() + ": " + other.id + " sent a " + frame.type() + " in the name of "
                            + peers[claimed].id + " on its own session: dropped (a node speaking as another)");
                }
                return DropReason.SENDER_MISMATCH;
            }
        }
        return otherwise;
    }

    /** @return false to read the frame again next cycle (back-pressure from a follower's writer) */
    private boolean dispatch(PeerLink p, FrameType type, long term) throws MalformedFrameException {
        long now = System.nanoTime();
        NodeStatus.Role role = roles.role();
        boolean fromLeader = role == NodeStatus.Role.FOLLOWER && p.position == roles.leader();
        switch (type) {
            case CHALLENGE -> count(sessions.onChallenge(p, frame));
            case CHALLENGE_RESPONSE -> count(sessions.onChallengeResponse(p, frame, now));
            case PROOF -> count(sessions.onProof(p, frame, now));
            case HELLO -> {
                hello.wrap(frame);
                if (heard(p, now, role == NodeStatus.Role.LEADER)) {
                    leaderSession.onHello(p, hello, term);
                }
            }
            case DESCRIPTOR -> {
                descriptor.wrap(frame);
                if (heard(p, now, fromLeader)) {
                    follower.onDescriptor(p, descriptor, term);
                }
            }
            case DATA -> {
                data.wrap(frame);
                return !heard(p, now, fromLeader) || follower.onData(p, data, frame.length(), term, now);
            }
            case EXCERPT_PART -> {
                part.wrap(frame);
                return !heard(p, now, fromLeader) || follower.onExcerptPart(p, part, term, now);
            }
            case ACK -> {
                ack.wrap(frame);
                if (heard(p, now, role == NodeStatus.Role.LEADER)) {
                    // an ACK of a batch sent at t keeps the lease as an echo of t would: under a saturating stream
                    // the leader's heartbeats can be dropped under back-pressure, its batches are not
                    roles.lease().echoed(p.position, leaderSession.onAck(p, ack), now);
                }
            }
            case HEARTBEAT -> {
                heartbeat.wrap(frame);
                p.lastHeardNanos = now;
                if (fromLeader) {
                    p.leaderClockEcho = heartbeat.sentNanos();
                    follower.onHeartbeat(p, heartbeat, term);
                } else if (role == NodeStatus.Role.LEADER) {
                    // authenticated, in its session, at this node's term (checked above): the follower's echo of this
                    // leader's clock keeps the lease; a follower at another term never gets this far
                    roles.lease().echoed(p.position, heartbeat.sentNanos(), now);
                }
            }
            case REFUSAL -> {
                refusal.wrap(frame);
                boolean inSession = p.established() && frame.sessionId() == p.sessionId;
                if (inSession || answersHandshakeInHand(p)) {
                    onRefusal(p, fromLeader);
                } else {
                    // A refusal outside a session carries no sequence: only the answer to this node's own handshake in
                    // hand is taken; a replayed one would otherwise be taken again and again.
                    drops.increment(DropReason.UNEXPECTED);
                }
            }
            default -> drops.increment(DropReason.UNEXPECTED);
        }
        return true;
    }

    /**
     * A decoded frame of a session: the peer is heard; whether this node takes that type in its role ({@code expected}),
     * else it is dropped as unexpected.
     */
    private boolean heard(PeerLink p, long now, boolean expected) {
        p.lastHeardNanos = now;
        if (!expected) {
            drops.increment(DropReason.UNEXPECTED);
        }
        return expected;
    }

    /** A refusal MACed under the handshake key names the session id of the handshake this node has in hand. */
    private boolean answersHandshakeInHand(PeerLink p) {
        PeerLink.State state = p.state();
        return (state == PeerLink.State.CHALLENGING || p.awaitingProof()) && frame.sessionId() == p.pendingSessionId;
    }

    private void count(DropReason dropped) {
        if (dropped != null) {
            drops.increment(dropped);
        }
    }

    /** A peer of another release: said once per 10 s, since it repeats every frame. */
    private void logVersion(DirectBuffer buffer, int offset) {
        long now = System.nanoTime();
        if (lastVersionLoggedNanos != 0 && now - lastVersionLoggedNanos < 10_000_000_000L) {
            return;
        }
        lastVersionLoggedNanos = now;
        int sender = buffer.getShort(offset + Frame.SENDER_OFFSET, Frame.ORDER) & 0xFFFF;
        String who = sender < peers.length && sender != self && peers[sender] != null ? peers[sender].id : "position " + sender;
        LOG.warn(settings.nodeId() + ": frames from " + who + " are of replication frame version "
                + (buffer.getByte(offset + Frame.VERSION_OFFSET) & 0xFF) + ", this node speaks " + Frame.VERSION
                + " only: every node of a cluster must run a release of the same frame version; dropped");
    }

    private void onRefusal(PeerLink p, boolean fromLeader) {
        String message = refusal.message();
        long now = System.nanoTime();
        if (refusal.reason() != lastRefusalLogged || now - lastRefusalLoggedNanos > 10_000_000_000L) {
            // a follower at another term than its leader is refused on every retry: log the news, not each retry
            lastRefusalLogged = refusal.reason();
            lastRefusalLoggedNanos = now;
            LOG.warn(settings.nodeId() + ": " + p.id + " refused: " + refusal.reason() + " " + message);
        }
        if (!fromLeader) {
            return;
        }
        int q = refusal.queue();
        if (refusal.reason() == RefusalReason.BEHIND_RETENTION && q < queues.length) {
            queues[q].transition(ReplicaState.BEHIND_RETENTION, message);
        }
    }
}
