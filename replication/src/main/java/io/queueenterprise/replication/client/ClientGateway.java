package io.queueenterprise.replication.client;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.Header;
import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.protocol.transport.UdpChannels;
import io.queueenterprise.protocol.client.AppendAckEncoder;
import io.queueenterprise.protocol.client.AppendBatchDecoder;
import io.queueenterprise.protocol.client.AppendDecoder;
import io.queueenterprise.protocol.client.AppendPendingEncoder;
import io.queueenterprise.protocol.client.ChallengeEncoder;
import io.queueenterprise.protocol.client.ClientAckMode;
import io.queueenterprise.protocol.client.ClientCredential;
import io.queueenterprise.protocol.client.ClientFrameDecoder;
import io.queueenterprise.protocol.client.ClientFrameDecoders;
import io.queueenterprise.protocol.client.ClientFrameMac;
import io.queueenterprise.protocol.client.ClientProtocol;
import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.protocol.client.ConnectDecoder;
import io.queueenterprise.protocol.client.ConnectedEncoder;
import io.queueenterprise.protocol.client.MalformedClientFrameException;
import io.queueenterprise.protocol.client.RefusedEncoder;
import io.queueenterprise.protocol.client.WriteTag;
import io.queueenterprise.protocol.client.WriterClaim;
import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.queue.StorageFullException;
import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.config.NodeConfig;
import io.queueenterprise.replication.engine.EngineSettings;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.collections.Long2ObjectHashMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The node's door for remote clients: one Aeron subscription on the node's client port, one reply publication per
 * client connection, all driven from the replication duty cycle (one call per cycle, same thread, so it reads the
 * engine's role, term and stores without locks). Authenticates each connection (challenge-response under the client
 * credential, then a MAC per frame under a per-connection key), and on the leader appends each client's sealed
 * envelope as-is, exactly once per (writer epoch, writer sequence), answering when the queue's ack mode is met.
 * Followers answer NOT_LEADER with the leader's client address. Nodes hold no data key: envelopes are only checked
 * for shape (unbound, the queue's cipher mode, epoch and sequence as the frame says).
 *
 * <p>Writers: an APPEND is taken only under the writer epoch its connection claimed ({@link WriterClaim}: the epoch
 * commits to a key only its writer session holds), and only with exactly the next writer sequence of that epoch (the
 * last one again is a retry, answered with its index). A CONNECT for a connection id the node already serves is
 * dropped: a replayed CONNECT cannot reset a live session. And only from a client that holds the queue's master key:
 * the APPEND's write tag ({@link WriteTag}) must verify under the node's write key for the envelope's key version, a
 * key derived one way from the master key ({@link WriteKeyFiles}), from which nothing decrypts or forges an envelope.
 */
public final class ClientGateway {
    private static final Logger LOG = LoggerFactory.getLogger(ClientGateway.class);
    public static final int STREAM_ID = 0x5143; // "QC"
    /** Client connections served at once; a CONNECT beyond is refused TOO_MANY_CLIENTS. */
    public static final int MAX_SESSIONS = 256;
    /** The largest envelope taken from a client (the client's publication term length bounds it too). */
    public static final int MAX_ENVELOPE = 256 * 1024;
    /** A connection that sent nothing for this long is closed (a client reconnects before it would be). */
    static final long SESSION_IDLE_NANOS = 30_000_000_000L;
    /** A reply that cannot be offered for this long (client gone) closes the connection. */
    static final long REPLY_TIMEOUT_NANOS = 2_000_000_000L;
    private static final int TAIL_BUDGET_PER_CYCLE = 1024;
    private static final int TAIL_BUDGET_BEFORE_APPEND = 1 << 16;
    /** Reply channels: small terms (replies are small frames). */
    private static final String REPLY_CHANNEL_OPTIONS = "|term-length=128k";

    private final NodeConfig config;
    private final ClientCredential credential;
    private final ClientFrameMac handshakeMac;
    private final WriteKeyFiles writeKeys;
    private final SecureRandom random = new SecureRandom();
    private final AtomicLongArray drops = new AtomicLongArray(ClientDrop.values().length);
    /** Drops per named client (authorised names, and {@link #UNNAMED} for any other), created off the hot path. */
    private final java.util.concurrent.ConcurrentHashMap<String, AtomicLongArray> dropsByClient = new java.util.concurrent.ConcurrentHashMap<>();
    /** Where drops of frames naming no authorised client are counted. */
    public static final String UNNAMED = "(unknown)";
    /** The authorised set a reload offered (any thread); taken by the duty cycle. Null: no named clients required. */
    private volatile AuthorisedClients offered;
    /** The set in force (duty-cycle thread). */
    private AuthorisedClients authorised;
    private long lastIdentityLogNanos;
    /** Client sessions established (both proofs checked) since start; written on the duty thread only. */
    private final java.util.concurrent.atomic.AtomicLong sessionsEstablished = new java.util.concurrent.atomic.AtomicLong();
    private final AtomicLongArray refusals = new AtomicLongArray(ClientRefusal.values().length + 1);
    private final Long2ObjectHashMap<Session> sessions = new Long2ObjectHashMap<>();
    /** Connections with acknowledgements queued ({@link Session#acking}). */
    private final ArrayList<Session> ackingSessions = new ArrayList<>(MAX_SESSIONS + 16);
    /** The frame taken last: {@link #frame} is the decoder of its type, one of {@link #in}'s. */
    private final ClientFrameDecoders in = new ClientFrameDecoders();
    private ClientFrameDecoder frame;
    private final ChallengeEncoder challengeEncoder = new ChallengeEncoder();
    private final ConnectedEncoder connectedEncoder = new ConnectedEncoder();
    private final AppendAckEncoder appendAckEncoder = new AppendAckEncoder();
    private final AppendPendingEncoder appendPendingEncoder = new AppendPendingEncoder();
    private final RefusedEncoder refusedEncoder = new RefusedEncoder();
    private final ExpandableArrayBuffer tx = new ExpandableArrayBuffer(16 * 1024); // an APPEND_ACK of 1,024 indexes fits
    /** An envelope's header, read out for its shape check (the envelope itself is never copied before the store). */
    private final byte[] envelopeHeader = new byte[Envelope.HEADER_LENGTH];

    private Aeron aeron;
    private HostedQueues node;
    private Subscription subscription;
    private FragmentAssembler assembler;
    private WriterSessions[] writers;
    private ClientTailSessions tails;
    private long nowNanos;
    private long lastSweepNanos;
    private int refusalSessions;
    private static final int MAX_REFUSAL_SESSIONS = 16;
    private volatile long appended;
    private volatile long batchFrames;
    private volatile long batchEntries;
    private volatile long ackFrames;

    public ClientGateway(NodeConfig config, ClientCredential credential) {
        this(config, credential, null);
    }

    /**
     * @param authorised the clients this node takes, by name and identity key; null: any client that proves the
     *                   cluster's client credential (no per-client identity)
     */
    public ClientGateway(NodeConfig config, ClientCredential credential, AuthorisedClients authorised) {
        this.config = config;
        this.credential = credential;
        this.handshakeMac = credential.handshakeMac();
        this.writeKeys = new WriteKeyFiles(config.writeKeyDirectory());
        this.offered = authorised;
        this.authorised = authorised;
    }

    /**
     * A new authorised set (a reload of the authorised-clients file; any thread). The duty cycle takes it at its next
     * turn: clients no longer in it, or in it with another key, are refused {@code UNKNOWN_CLIENT} on their live
     * sessions, which then close; the others carry on untouched.
     */
    public void authorise(AuthorisedClients set) {
        offered = java.util.Objects.requireNonNull(set, "set");
    }

    /** The set in force, as last taken by the duty cycle. */
    public AuthorisedClients authorised() {
        return authorised;
    }

    /** Frames of the client {@code name} (or {@link #UNNAMED}) dropped for {@code reason}. Any thread. */
    public long drops(String name, ClientDrop reason) {
        AtomicLongArray counts = dropsByClient.get(name);
        return counts == null ? 0 : counts.get(reason.ordinal());
    }

    /** Every client with a drop counted, and its counts by reason, for the metrics. Any thread. */
    public java.util.Map<String, long[]> dropsByClient() {
        java.util.Map<String, long[]> out = new java.util.TreeMap<>();
        dropsByClient.forEach((name, counts) -> {
            long[] c = new long[counts.length()];
            for (int i = 0; i < c.length; i++) {
                c[i] = counts.get(i);
            }
            out.put(name, c);
        });
        return out;
    }

    /** Called once the engine's Aeron client is up (duty-cycle thread). */
    public void start(Aeron aeron, HostedQueues node) {
        this.aeron = aeron;
        this.node = node;
        NodeConfig.Peer self = config.self();
        subscription = aeron.addSubscription("aeron:udp?endpoint=" + self.host() + ":" + self.clientPort(), STREAM_ID);
        assembler = new FragmentAssembler(this::onFragment);
        tails = new ClientTailSessions(node, config.nodeId());
        writers = new WriterSessions[node.queueCount()];
        for (int q = 0; q < writers.length; q++) {
            writers[q] = new WriterSessions();
        }
    }

    /** One duty cycle's share: read client frames, release quorum acks, keep the writer sessions current. */
    public int doWork(long now) {
        nowNanos = now;
        AuthorisedClients set = offered;
        if (set != authorised) {
            revokeOutside(set);
        }
        int work = subscription.poll(assembler, 64);
        for (int q = 0; q < writers.length; q++) {
            ReplicaStore store = node.store(q);
            if (store != null && !writers[q].catchUp(store, TAIL_BUDGET_PER_CYCLE)) {
                work++;
            }
        }
        work += releaseAcks();
        work += tails.doWork(now);
        if (!sessions.isEmpty()) {
            serviceSessions(now);
        }
        return work;
    }

    public void close() {
        for (Session s : sessions.values()) {
            s.publication.close();
        }
        sessions.clear();
        ackingSessions.clear();
        if (tails != null) {
            tails.close();
        }
        if (writers != null) {
            for (WriterSessions w : writers) {
                w.close();
            }
        }
        if (subscription != null) {
            subscription.close();
        }
        writeKeys.close();
    }

    public long drops(ClientDrop reason) {
        return drops.get(reason.ordinal());
    }

    public long refusals(ClientRefusal reason) {
        return refusals.get(reason.ordinal());
    }

    /** Client sessions established since start (a reconnect adds one; a revocation of others adds none). Any thread. */
    public long sessionsEstablished() {
        return sessionsEstablished.get();
    }

    /** Envelopes appended for clients since start. */
    public long appended() {
        return appended;
    }

    /** APPEND_BATCH frames taken (their entries count in {@link #appended} as they are appended). */
    public long batchFrames() {
        return batchFrames;
    }

    /** Entries of the APPEND_BATCH frames taken (appended, answered as resends or refused): per frame, how well clients batch. */
    public long batchEntries() {
        return batchEntries;
    }

    /** APPEND_ACK frames sent since start (each acknowledges a run of appends: coalesced). */
    public long ackFrames() {
        return ackFrames;
    }

    /** Remote tails' counters (read from other threads: an estimate while the node runs). */
    public long tailCount(TailCounter counter) {
        return tails == null ? 0 : tails.count(counter);
    }

    /** TAIL_ENDs sent for {@code reason} (read from other threads: an estimate while the node runs). */
    public long tailEnds(ClientRefusal reason) {
        return tails == null ? 0 : tails.ends(reason);
    }

    /** Connections open now (read from other threads: an estimate). */
    public int sessionCount() {
        return sessions.size();
    }

    private void drop(ClientDrop reason) {
        drops.lazySet(reason.ordinal(), drops.get(reason.ordinal()) + 1); // one writer thread
    }

    /** A handshake drop, counted also against the client it names ({@link #UNNAMED} when none authorised). */
    private void drop(ClientDrop reason, String clientName) {
        drop(reason);
        String name = authorised != null && authorised.key(clientName) != null ? clientName : UNNAMED;
        AtomicLongArray counts = dropsByClient.computeIfAbsent(name, n -> new AtomicLongArray(ClientDrop.values().length));
        counts.lazySet(reason.ordinal(), counts.get(reason.ordinal()) + 1);
    }

    /** Said at most once per 10 s: handshakes that name a client they cannot prove, or none authorised. */
    private void logIdentity(String message) {
        if (lastIdentityLogNanos == 0 || nowNanos - lastIdentityLogNanos > 10_000_000_000L) {
            lastIdentityLogNanos = nowNanos;
            LOG.warn(config.nodeId() + ": " + message);
        }
    }

    /** Takes a new authorised set: the live sessions of clients it no longer holds (with their key) are refused and closed. */
    private void revokeOutside(AuthorisedClients set) {
        authorised = set;
        for (Session s : sessions.values()) {
            if (s.mac != null && !s.closeAfterReplies && !set.holds(s.clientName, s.clientKey)) {
                LOG.warn(config.nodeId() + ": client '" + s.clientName + "' is no longer authorised: its connection "
                        + Long.toHexString(s.connection) + " is closed");
                refuse(s, s.mac, ClientRefusal.UNKNOWN_CLIENT, 0, 0, "client '" + s.clientName + "' is not authorised by node "
                        + config.nodeId() + " (revoked)");
                s.closeAfterReplies = true;
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ receive

    private void onFragment(DirectBuffer buffer, int offset, int length, Header header) {
        try {
            frame = in.wrap(buffer, offset, length);
        } catch (MalformedClientFrameException e) {
            drop(ClientDrop.MALFORMED);
            return;
        }
        long connection = frame.connection();
        if (frame == in.connect) {
            onConnect(connection);
            return;
        }
        Session s = sessions.get(connection);
        if (s == null) {
            drop(ClientDrop.UNKNOWN_SESSION);
            return;
        }
        if (frame == in.proof) {
            onProof(s);
            return;
        }
        if (s.mac == null) {
            drop(ClientDrop.UNEXPECTED); // a session frame before the proof
            return;
        }
        if (!s.mac.verify(frame)) {
            drop(ClientDrop.BAD_MAC);
            return;
        }
        if (frame.sequence() <= s.rxSequence) {
            drop(ClientDrop.REPLAYED_FRAME);
            return;
        }
        s.rxSequence = frame.sequence();
        s.lastHeardNanos = nowNanos;
        switch (frame.type()) {
            case APPEND -> onAppend(s);
            case APPEND_BATCH -> onAppendBatch(s);
            case TAIL_OPEN -> {
                if (s.queue < 0 || in.tailOpen.queue() != s.queue) {
                    drop(ClientDrop.UNEXPECTED);
                } else {
                    tails.onOpen(s, in.tailOpen, nowNanos);
                }
            }
            case TAIL_CREDIT -> tails.onCredit(s, in.tailCredit);
            case CLAIM -> onClaim(s);
            default -> drop(ClientDrop.UNEXPECTED);
        }
    }

    private void onConnect(long connection) {
        if (!handshakeMac.verify(frame)) {
            drop(ClientDrop.UNAUTHENTICATED, UNNAMED);
            refuseBeforeSession(connection, ClientRefusal.UNAUTHENTICATED,
                    "the CONNECT does not verify under this cluster's client credential");
            return;
        }
        if (sessions.containsKey(connection)) {
            // A client draws a new random id for every connection and never sends CONNECT twice on one, so this is
            // a replay (or a collision): the session that has the id keeps it, unchanged.
            drop(ClientDrop.REPLAYED_CONNECT);
            return;
        }
        ConnectDecoder connect = in.connect;
        String clientName = connect.clientName();
        byte[] clientKey = null;
        if (authorised != null) {
            clientKey = authorised.key(clientName);
            if (clientKey == null) {
                // Not in the set: never authorised, revoked, or a client without an identity. Told so, typed, once.
                drop(ClientDrop.UNKNOWN_CLIENT, clientName);
                logIdentity("a CONNECT names client '" + clientName + "', which this node does not authorise: refused");
                refuseBeforeSession(connection, ClientRefusal.UNKNOWN_CLIENT, clientName.isEmpty()
                        ? "node " + config.nodeId() + " takes named clients only (RemoteQueue.Builder.identity)"
                        : "client '" + clientName + "' is not authorised by node " + config.nodeId());
                return;
            }
        }
        byte[] clientEphemeral = new byte[ClientProtocol.EPHEMERAL_LENGTH];
        connect.clientEphemeral(clientEphemeral);
        String queueName = connect.queueName();
        String host = connect.replyHost();
        int port = connect.replyPort();
        byte[] clientNonce = new byte[ClientProtocol.NONCE_LENGTH];
        connect.clientNonce(clientNonce);
        if (sessions.size() >= MAX_SESSIONS) {
            if (sessions.size() >= MAX_SESSIONS + MAX_REFUSAL_SESSIONS) {
                return; // bounded: beyond this even the refusal is not sent
            }
            Session s = open(connection, host, port, queueName, clientNonce);
            if (s != null) {
                refuse(s, handshakeMac, ClientRefusal.TOO_MANY_CLIENTS, 0, 0, "node " + config.nodeId() + " serves "
                        + MAX_SESSIONS + " client connections already");
                s.closeAfterReplies = true;
            }
            return;
        }
        Session s = open(connection, host, port, queueName, clientNonce);
        if (s == null) {
            return;
        }
        io.queueenterprise.crypto.EphemeralKey ephemeral = io.queueenterprise.crypto.EphemeralKey.generate(random);
        s.sharedSecret = ephemeral.agree(clientEphemeral);
        if (s.sharedSecret == null) {
            drop(ClientDrop.UNAUTHENTICATED, clientName); // a small-order point: an attacker's choice
            s.refusalOnly = true;
            refusalSessions++;
            refuse(s, handshakeMac, ClientRefusal.UNAUTHENTICATED, 0, 0, "the CONNECT's ephemeral key is degenerate");
            s.closeAfterReplies = true;
            return;
        }
        s.clientName = clientName;
        s.clientKey = clientKey;
        s.clientEphemeral = clientEphemeral;
        s.nodeEphemeral = ephemeral.publicKey();
        random.nextBytes(s.nodeNonce);
        byte[] proof = credential.proof("node", connection, queueName, clientName, clientNonce, s.nodeNonce, clientEphemeral,
                s.nodeEphemeral);
        int length = challengeEncoder.wrap(tx, 0).encode(connection, ++s.txSequence, clientNonce, s.nodeNonce, proof,
                s.nodeEphemeral);
        handshakeMac.sign(tx, 0, length);
        s.send(tx, length, nowNanos);
    }

    /**
     * Tells a client without the credential why it gets nothing, so it can report it. Bounded: at most
     * {@link #MAX_REFUSAL_SESSIONS} such answers in flight, never replacing a session, one frame each; and an Aeron
     * publication sends data only to a receiver that answered its setup, so this cannot be aimed at a bystander.
     */
    private void refuseBeforeSession(long connection, ClientRefusal reason, String message) {
        if (refusalSessions >= MAX_REFUSAL_SESSIONS || sessions.containsKey(connection) || sessions.size() >= MAX_SESSIONS) {
            return;
        }
        Session s = open(connection, in.connect.replyHost(), in.connect.replyPort(), "", new byte[0]);
        if (s != null) {
            refusalSessions++;
            s.refusalOnly = true;
            refuse(s, handshakeMac, reason, 0, 0, message);
            s.closeAfterReplies = true;
        }
    }

    private Session open(long connection, String host, int port, String queueName, byte[] clientNonce) {
        ExclusivePublication publication;
        try {
            publication = aeron.addExclusivePublication(UdpChannels.endpoint(host, port) + REPLY_CHANNEL_OPTIONS, STREAM_ID);
        } catch (RuntimeException e) {
            drop(ClientDrop.MALFORMED); // an address Aeron cannot use
            return null;
        }
        Session s = new Session(connection, publication, queueName, clientNonce, nowNanos);
        sessions.put(connection, s);
        return s;
    }

    private void onProof(Session s) {
        if (s.mac != null || s.refusalOnly || !handshakeMac.verify(frame)) {
            drop(ClientDrop.UNAUTHENTICATED, s.clientName);
            return;
        }
        byte[] proof = new byte[ClientProtocol.PROOF_LENGTH];
        in.proof.clientProof(proof);
        byte[] expected = credential.proof("client", s.connection, s.queueName, s.clientName, s.clientNonce, s.nodeNonce,
                s.clientEphemeral, s.nodeEphemeral);
        if (!ClientCredential.proofEquals(proof, expected)) {
            drop(ClientDrop.UNAUTHENTICATED, s.clientName);
            refuse(s, handshakeMac, ClientRefusal.UNAUTHENTICATED, 0, 0,
                    "the client's proof does not verify: it does not hold this cluster's client credential");
            s.closeAfterReplies = true;
            return;
        }
        if (s.clientKey != null) {
            byte[] signature = new byte[ClientProtocol.SIGNATURE_LENGTH];
            in.proof.signature(signature);
            if (!io.queueenterprise.crypto.IdentityKey.verify(s.clientKey, ClientCredential.signedTranscript(s.connection,
                    s.queueName, s.clientName, s.clientNonce, s.nodeNonce, s.clientEphemeral, s.nodeEphemeral), signature)) {
                drop(ClientDrop.UNAUTHENTICATED, s.clientName);
                logIdentity("a PROOF in the name of client '" + s.clientName + "' is not signed by its identity key: refused");
                refuse(s, handshakeMac, ClientRefusal.UNAUTHENTICATED, 0, 0, "the PROOF is not signed by the identity key"
                        + " authorised for client '" + s.clientName + "'");
                s.closeAfterReplies = true;
                return;
            }
        }
        s.mac = credential.sessionMac(s.connection, s.clientNonce, s.nodeNonce, s.sharedSecret, s.clientEphemeral,
                s.nodeEphemeral, s.clientName);
        java.util.Arrays.fill(s.sharedSecret, (byte) 0);
        s.sharedSecret = null;
        sessionsEstablished.lazySet(sessionsEstablished.get() + 1);
        s.rxSequence = frame.sequence();
        s.lastHeardNanos = nowNanos;
        int q = queuePosition(s.queueName);
        if (q < 0) {
            refuse(s, s.mac, ClientRefusal.UNKNOWN_QUEUE, 0, 0, "node " + config.nodeId() + " hosts no queue '" + s.queueName + "'");
            return;
        }
        EngineSettings.QueueSettings spec = node.spec(q);
        if (spec.encryption() == EngineSettings.Encryption.NONE) {
            refuse(s, s.mac, ClientRefusal.PLAIN_QUEUE, 0, 0, "queue '" + s.queueName + "' is plain; remote clients append"
                    + " only sealed envelopes (nodes hold no data keys)");
            return;
        }
        if (node.store(q) == null) {
            refuse(s, s.mac, ClientRefusal.NOT_READY, 0, 0, "node " + config.nodeId() + " is still opening queue '" + s.queueName + "'");
            return;
        }
        byte[] descriptor = node.store(q).descriptorBytes();
        // a leader without its lease says it does not lead, and names no leader: the client tries the other nodes
        boolean leaderWithoutLease = node.role() == NodeStatus.Role.LEADER && !node.mayAcknowledge(System.nanoTime());
        boolean leads = node.role() == NodeStatus.Role.LEADER && !leaderWithoutLease;
        if (descriptor == null && !leads) {
            // a follower redirects whether or not the leader's descriptor reached it yet (a new queue's does so
            // within moments); the client takes the descriptor of the leader it appends to
            descriptor = new byte[0];
        } else if (descriptor == null || descriptor.length > ClientProtocol.MAX_DESCRIPTOR) {
            refuse(s, s.mac, ClientRefusal.NO_DESCRIPTOR, 0, 0, "queue '" + s.queueName + "' has no descriptor on node "
                    + config.nodeId() + " yet: a key holder (a local writer, or qe) creates it");
            return;
        }
        s.queue = q;
        NodeConfig.Peer leader = leaderWithoutLease ? null : leaderPeer();
        int length = connectedEncoder.wrap(tx, 0).encode(s.connection, ++s.txSequence, node.term(), leads, ackMode(spec.ackMode()),
                q, MAX_ENVELOPE, leader == null ? "" : leader.host(), leader == null ? 0 : leader.clientPort(), descriptor);
        s.mac.sign(tx, 0, length);
        s.send(tx, length, nowNanos);
    }

    // ------------------------------------------------------------------------------------------------ append

    /** CLAIM: this connection writes under the epoch whose key signed this connection's id and nonces. */
    private void onClaim(Session s) {
        if (s.queue < 0 || s.claims >= WriterClaim.MAX_PER_CONNECTION) {
            drop(ClientDrop.UNEXPECTED);
            return;
        }
        s.claims++;
        byte[] publicKey = new byte[WriterClaim.PUBLIC_KEY_LENGTH];
        byte[] signature = new byte[WriterClaim.SIGNATURE_LENGTH];
        in.claim.publicKey(publicKey);
        in.claim.signature(signature);
        long epoch = in.claim.epoch();
        if (!WriterClaim.verify(publicKey, signature, epoch, s.connection, s.clientNonce, s.nodeNonce)) {
            drop(ClientDrop.BAD_CLAIM); // the APPEND that follows is refused NOT_WRITER
            return;
        }
        s.claimedEpoch = epoch;
        s.claimed = true;
    }

    private void onAppend(Session s) {
        AppendDecoder frame = in.append;
        if (s.queue < 0 || frame.queue() != s.queue) {
            drop(ClientDrop.UNEXPECTED);
            return;
        }
        append(s, frame.clientTerm(), frame.epoch(), frame.writerSequence(), frame.buffer(), frame.writeTagOffset(),
                frame.envelopeOffset(), frame.envelopeLength());
    }

    /**
     * Each entry exactly as an APPEND of its own, in order (the frame's MAC and sequence were checked once for all):
     * every one is appended, answered as a resend, or refused for itself, so a refusal in the middle leaves the ones
     * before it appended and the ones after refused SEQUENCE_GAP (the client resends from the refused one), as the
     * same appends in separate frames would.
     */
    private void onAppendBatch(Session s) {
        AppendBatchDecoder frame = in.appendBatch;
        if (s.queue < 0 || frame.queue() != s.queue) {
            drop(ClientDrop.UNEXPECTED);
            return;
        }
        batchFrames++;
        batchEntries += frame.count(); // once per frame, not per entry
        long clientTerm = frame.clientTerm();
        long epoch = frame.epoch();
        int sequence = frame.firstSequence();
        for (int k = 0, entry = frame.firstEntry(), n = frame.count(); k < n; k++, entry = frame.nextEntry(entry)) {
            append(s, clientTerm, epoch, sequence + k, frame.buffer(), frame.writeTagOffset(entry), frame.envelopeOffset(entry),
                    frame.envelopeLength(entry));
        }
    }

    /** One remote append: writer {@code epoch}'s {@code sequence}, its envelope and write tag in {@code bytes}. */
    private void append(Session s, long clientTerm, long epoch, int sequence, DirectBuffer bytes, int tagAt, int at, int length) {
        int q = s.queue;
        if (node.role() != NodeStatus.Role.LEADER) {
            NodeConfig.Peer leader = leaderPeer();
            if (leader == null) {
                refuse(s, s.mac, ClientRefusal.NO_LEADER, epoch, sequence, "node " + config.nodeId() + " is "
                        + node.role() + " and knows no leader");
            } else {
                refuse(s, s.mac, ClientRefusal.NOT_LEADER, epoch, sequence, "node " + config.nodeId() + " follows "
                        + leader.id());
            }
            return;
        }
        if (!node.mayAcknowledge(System.nanoTime())) {
            // before anything else, retries included: a repeat answered with its index would be an acknowledgement
            refuse(s, s.mac, ClientRefusal.LEASE_LAPSED, epoch, sequence, "node " + config.nodeId() + " leads term "
                    + node.term() + " but holds no lease (no majority heard at its term lately, or its term not"
                    + " confirmed yet)");
            return;
        }
        if (clientTerm > node.term()) {
            refuse(s, s.mac, ClientRefusal.STALE_TERM, epoch, sequence, "node " + config.nodeId() + " leads term "
                    + node.term() + " but the client has seen term " + clientTerm);
            return;
        }
        if (length > MAX_ENVELOPE) {
            refuse(s, s.mac, ClientRefusal.TOO_LARGE, epoch, sequence, "envelope of " + length + " bytes; a node takes up to "
                    + MAX_ENVELOPE + " from a client");
            return;
        }
        bytes.getBytes(at, envelopeHeader, 0, Math.min(length, envelopeHeader.length));
        String shape = envelopeProblem(node.spec(q), envelopeHeader, length, epoch, sequence);
        if (shape != null) {
            refuse(s, s.mac, ClientRefusal.MALFORMED_ENVELOPE, epoch, sequence, shape);
            return;
        }
        // The client proves it holds the queue's master key: a tag under the write key of the envelope's key version.
        WriteTag writeTag = writeKeys.find(s.queueName, Envelope.keyId(envelopeHeader, 0), nowNanos);
        if (writeTag == null) {
            refuse(s, s.mac, ClientRefusal.WRITE_UNAUTHORISED, epoch, sequence, writeKeys.problem());
            return;
        }
        if (!writeTag.verify(bytes, at, length, tagAt)) {
            refuse(s, s.mac, ClientRefusal.WRITE_UNAUTHORISED, epoch, sequence, "the APPEND's write tag does not verify"
                    + " under queue '" + s.queueName + "' key version " + Envelope.keyId(envelopeHeader, 0)
                    + ": the client does not hold the queue's master key");
            return;
        }
        if (!s.claimed || s.claimedEpoch != epoch) {
            refuse(s, s.mac, ClientRefusal.NOT_WRITER, epoch, sequence, "this connection has not claimed writer epoch "
                    + Long.toHexString(epoch) + ": only the writer session holding that epoch's key appends under it");
            return;
        }
        WriterSessions w = writers[q];
        ReplicaStore store = node.store(q);
        if (store == null || !w.catchUp(store, TAIL_BUDGET_BEFORE_APPEND)) {
            refuse(s, s.mac, ClientRefusal.NOT_READY, epoch, sequence, "node " + config.nodeId()
                    + " is still reading its queue to rebuild the writer sessions");
            return;
        }
        long last = w.lastSequence(epoch);
        long unsigned = sequence & 0xFFFF_FFFFL;
        if (last >= 0 && unsigned <= last) {
            // a resend (a retry, or a window resent after a failover): the original index, nothing appended
            long held = w.indexOf(epoch, unsigned);
            if (held >= 0) {
                answer(s, epoch, sequence, held, true);
                return;
            }
            refuse(s, s.mac, ClientRefusal.REPLAYED, epoch, sequence, "writer sequence " + unsigned
                    + " is below the last one this writer appended (" + last + ") and older than the appends this node remembers");
            return;
        }
        long expected = last + 1; // 0 for an epoch the queue holds nothing of
        if (unsigned != expected) {
            // the REFUSED frame's writer sequence is the expected one: the client resends from there
            refuse(s, s.mac, ClientRefusal.SEQUENCE_GAP, epoch, (int) expected, "expected writer sequence " + expected
                    + " for writer epoch " + Long.toHexString(epoch) + ", got " + unsigned + ": a writer's sequences have no gaps");
            return;
        }
        long index;
        try {
            // The envelope's one copy, from Aeron's buffer (the MAC was verified there; the driver runs on this thread,
            // so it cannot change meanwhile) straight into the mapped cycle file.
            byte[] heap = bytes.byteArray();
            index = heap != null
                    ? store.append(heap, bytes.wrapAdjustment() + at, length)
                    : store.append(bytes.addressOffset() + at, length);
        } catch (StorageFullException e) {
            refuse(s, s.mac, ClientRefusal.CANNOT_STORE, epoch, sequence, e.getMessage());
            return;
        } catch (RuntimeException e) {
            LOG.error("remote append to " + node.spec(q).name() + " failed", e);
            refuse(s, s.mac, ClientRefusal.CANNOT_STORE, epoch, sequence, "append failed on node " + config.nodeId() + ": " + e);
            return;
        }
        w.appended(epoch, sequence, index);
        appended++;
        answer(s, epoch, sequence, index, false);
    }

    /**
     * Null when the bytes are an unbound envelope of the queue's mode carrying {@code epoch} and {@code sequence};
     * {@code env} holds at least the envelope's header when {@code length} covers the mode's overhead.
     */
    static String envelopeProblem(EngineSettings.QueueSettings spec, byte[] env, int length, long epoch, int sequence) {
        CipherMode mode = spec.encryption() == EngineSettings.Encryption.AES_128_CTR ? CipherMode.AES_128_CTR : CipherMode.AES_128_CTR_POLY1305;
        if (length < Envelope.overhead(mode)) {
            return "envelope of " + length + " bytes is shorter than the " + mode + " overhead";
        }
        if (Envelope.version(env, 0) != Envelope.VERSION) {
            return "envelope version " + Envelope.version(env, 0) + " (expected " + Envelope.VERSION + ")";
        }
        if (Envelope.modeByte(env, 0) != mode.wireCode()) {
            return "envelope mode byte 0x" + Integer.toHexString(Envelope.modeByte(env, 0)) + ": queue '" + spec.name()
                    + "' is " + mode + ", and a remote envelope is never index bound";
        }
        if (Envelope.epoch(env, 0) != epoch || Envelope.sequence(env, 0) != sequence) {
            return "the envelope's writer epoch/sequence differ from the frame's";
        }
        return null;
    }

    /**
     * Queues the acknowledgement of writer {@code epoch}'s {@code sequence} at {@code index}: sent, coalesced with the
     * connection's others, at the end of this duty cycle, or (quorum mode) of the first cycle in which the quorum
     * index reaches it ({@link #releaseAcks}). A resend still waiting for the quorum is answered APPEND_PENDING at once
     * (the client hears the node is alive and goes on waiting). A connection's queue of acks is bounded
     * ({@link Session#ACK_CAPACITY}, above the client's largest window): beyond it, NOT_READY (nothing appended).
     */
    private void answer(Session s, long epoch, int sequence, long index, boolean resend) {
        int q = s.queue;
        boolean quorum = node.spec(q).ackMode() == AckMode.QUORUM;
        if (resend && quorum && node.quorumIndex(q) < index) {
            sendPending(s, epoch, sequence, index);
        }
        if (!s.queueAck(epoch, sequence, index)) {
            refuse(s, s.mac, ClientRefusal.NOT_READY, epoch, sequence, "node " + config.nodeId() + " holds "
                    + Session.ACK_CAPACITY + " acknowledgements for this connection already: send fewer at once");
            return;
        }
        if (!s.acking) {
            s.acking = true;
            ackingSessions.add(s);
        }
    }

    /**
     * Sends every connection's queued acks that its queue's ack mode now allows (all of them, or in quorum mode those
     * at or below the quorum index, on a leader), one APPEND_ACK per run of consecutive sequences of one epoch. A
     * pending quorum ack is never refused: it may still become durable.
     */
    private int releaseAcks() {
        int n = 0;
        // Outside quorum mode an ack goes only under the leader lease: one queued in a cycle during which the lease
        // lapsed waits (written, not acknowledged) until it holds again; the client's resend meanwhile is refused
        // LEASE_LAPSED, and if another node leads, this copy is quarantined when this node follows it.
        boolean leased = node.mayAcknowledge(System.nanoTime());
        for (int i = ackingSessions.size() - 1; i >= 0; i--) {
            Session s = ackingSessions.get(i);
            if (!s.closed) {
                boolean quorum = node.spec(s.queue).ackMode() == AckMode.QUORUM;
                long watermark = !quorum ? (leased ? Long.MAX_VALUE : Long.MIN_VALUE)
                        : node.role() == NodeStatus.Role.LEADER ? node.quorumIndex(s.queue) : Long.MIN_VALUE;
                n += sendAcks(s, watermark);
            }
            if (s.closed || s.ackCount == 0) {
                s.acking = false;
                int last = ackingSessions.size() - 1;
                ackingSessions.set(i, ackingSessions.get(last));
                ackingSessions.remove(last);
            }
        }
        return n;
    }

    /** Sends {@code s}'s queued acks at or below {@code watermark}, in order; the frames sent. */
    private int sendAcks(Session s, long watermark) {
        int frames = 0;
        long term = node.term();
        while (s.ackCount > 0 && s.ackIndexes[s.ackHead] <= watermark) {
            int head = s.ackHead;
            long epoch = s.ackEpochs[head];
            int sequence = s.ackSequences[head];
            appendAckEncoder.wrap(tx, 0).begin(s.connection, ++s.txSequence, epoch, term).index(s.ackIndexes[head]);
            s.popAck();
            while (s.ackCount > 0 && appendAckEncoder.count() < ClientProtocol.MAX_ACKS_PER_FRAME) {
                int next = s.ackHead;
                if (s.ackEpochs[next] != epoch || s.ackSequences[next] != sequence + 1 || s.ackIndexes[next] > watermark) {
                    break;
                }
                appendAckEncoder.index(s.ackIndexes[next]);
                sequence++;
                s.popAck();
            }
            int length = appendAckEncoder.end(sequence);
            s.mac.sign(tx, 0, length);
            s.send(tx, length, nowNanos);
            frames++;
            ackFrames++; // one writer thread
        }
        return frames;
    }

    private void sendPending(Session s, long epoch, int sequence, long index) {
        int length = appendPendingEncoder.wrap(tx, 0).encode(s.connection, ++s.txSequence, epoch, sequence, index, node.term());
        s.mac.sign(tx, 0, length);
        s.send(tx, length, nowNanos);
    }

    private void refuse(Session s, ClientFrameMac mac, ClientRefusal reason, long epoch, int sequence, String message) {
        refusals.lazySet(reason.ordinal(), refusals.get(reason.ordinal()) + 1);
        NodeConfig.Peer leader = leaderPeer();
        int length = refusedEncoder.wrap(tx, 0).encode(s.connection, ++s.txSequence, reason, epoch, sequence, node.term(),
                leader == null ? "" : leader.host(), leader == null ? 0 : leader.clientPort(), message);
        mac.sign(tx, 0, length);
        s.send(tx, length, nowNanos);
    }

    // ------------------------------------------------------------------------------------------------ helpers

    private NodeConfig.Peer leaderPeer() {
        int position = node.leaderPosition();
        if (position < 0) {
            return null;
        }
        NodeConfig.Peer p = config.peers().get(position);
        return p.clientPort() == 0 ? null : p;
    }

    private int queuePosition(String name) {
        for (int q = 0; q < node.queueCount(); q++) {
            if (node.spec(q).name().equals(name)) {
                return q;
            }
        }
        return -1;
    }

    private static ClientAckMode ackMode(AckMode mode) {
        return switch (mode) {
            case ASYNC -> ClientAckMode.ASYNC;
            case REPLICATED_READS -> ClientAckMode.REPLICATED_READS;
            case QUORUM -> ClientAckMode.QUORUM;
        };
    }

    /** Offers queued replies; closes failed, finished and (every 100 ms) idle connections. */
    private void serviceSessions(long now) {
        boolean sweep = now - lastSweepNanos > 100_000_000L;
        if (sweep) {
            lastSweepNanos = now;
        }
        Iterator<Session> it = sessions.values().iterator();
        while (it.hasNext()) {
            Session s = it.next();
            if (!s.outbox.isEmpty()) {
                s.flush(now);
            }
            boolean done = s.closeAfterReplies && s.outbox.isEmpty();
            if (done || s.failed || sweep && now - s.lastHeardNanos > SESSION_IDLE_NANOS) {
                if (s.refusalOnly) {
                    refusalSessions--;
                }
                s.close();
                it.remove();
            }
        }
    }

    /** One client connection: its reply publication, keys, sequences and the ack it waits for (tails: package). */
    static final class Session {
        final long connection;
        final ExclusivePublication publication;
        final String queueName;
        final byte[] clientNonce;
        final byte[] nodeNonce = new byte[ClientProtocol.NONCE_LENGTH];
        /**
         * Frames not yet offered (the reply channel connects after the first CONNECT; back-pressure), copied into one
         * ring that grows as needed and is then reused: a back-pressured reply allocates nothing in steady state.
         */
        final org.agrona.ExpandableRingBuffer outbox = new org.agrona.ExpandableRingBuffer();
        /** Offers the outbox's oldest frame; its result in {@link #offered}. Bound once: no allocation per flush. */
        private final org.agrona.ExpandableRingBuffer.MessageConsumer offerOldest = this::offerOldest;
        private long offered;
        ClientFrameMac mac;
        int queue = -1;
        long rxSequence;
        long txSequence;
        long lastHeardNanos;
        long outboxSinceNanos;
        /** Acknowledgements queued for this connection (a ring from {@link #ackHead}), allocated at its first APPEND. */
        static final int ACK_CAPACITY = 8192;
        long[] ackEpochs;
        int[] ackSequences;
        long[] ackIndexes;
        int ackHead;
        int ackCount;
        /** In the gateway's list of connections with acks queued. */
        boolean acking;
        /** The writer epoch this connection proved it owns ({@link WriterClaim}), when {@link #claimed}. */
        long claimedEpoch;
        boolean claimed;
        int claims;
        boolean closeAfterReplies;
        boolean failed;
        boolean closed;
        /** Opened only to refuse an unauthenticated CONNECT. */
        boolean refusalOnly;
        /** The client's name as its CONNECT gave it; empty without an identity. */
        String clientName = "";
        /** The identity key it proved (null: the node authorises no named clients). */
        byte[] clientKey;
        byte[] clientEphemeral;
        byte[] nodeEphemeral;
        /** The X25519 secret, from CONNECT until the PROOF (then wiped). */
        byte[] sharedSecret;

        Session(long connection, ExclusivePublication publication, String queueName, byte[] clientNonce, long now) {
            this.connection = connection;
            this.publication = publication;
            this.queueName = queueName;
            this.clientNonce = clientNonce;
            this.lastHeardNanos = now;
        }

        boolean queueAck(long epoch, int sequence, long index) {
            if (ackEpochs == null) {
                ackEpochs = new long[ACK_CAPACITY];
                ackSequences = new int[ACK_CAPACITY];
                ackIndexes = new long[ACK_CAPACITY];
            }
            if (ackCount == ACK_CAPACITY) {
                return false;
            }
            int slot = (ackHead + ackCount) & (ACK_CAPACITY - 1);
            ackEpochs[slot] = epoch;
            ackSequences[slot] = sequence;
            ackIndexes[slot] = index;
            ackCount++;
            return true;
        }

        void popAck() {
            ackHead = (ackHead + 1) & (ACK_CAPACITY - 1);
            ackCount--;
        }

        void send(ExpandableArrayBuffer buffer, int length, long now) {
            if (outbox.isEmpty()) {
                long result = publication.offer(buffer, 0, length);
                if (result > 0) {
                    return;
                }
                if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
                    failed = true;
                    return;
                }
                outboxSinceNanos = now;
            }
            if (!outbox.append(buffer, 0, length)) {
                failed = true; // a client that took nothing for a gigabyte of replies
            }
        }

        private boolean offerOldest(org.agrona.MutableDirectBuffer buffer, int offset, int length, int headOffset) {
            offered = publication.offer(buffer, offset, length);
            return offered > 0; // consumed only once offered
        }

        void flush(long now) {
            while (!outbox.isEmpty()) {
                offered = 0;
                outbox.consume(offerOldest, 1);
                long result = offered;
                if (result > 0) {
                    outboxSinceNanos = now;
                } else if (result == Publication.CLOSED || now - outboxSinceNanos > REPLY_TIMEOUT_NANOS) {
                    failed = true;
                    return;
                } else {
                    return;
                }
            }
        }

        void close() {
            closed = true;
            publication.close();
        }
    }
}
