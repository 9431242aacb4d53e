package io.queueenterprise.remote;

import io.aeron.Aeron;
import io.aeron.Publication;
import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.ExcerptSealer;
import io.queueenterprise.crypto.KeyFileException;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.KeyRingSource;
import io.queueenterprise.crypto.QueueIdentity;
import io.queueenterprise.crypto.WriterEpochs;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueConfigurationException;
import io.queueenterprise.queue.QueueDescriptor;
import io.queueenterprise.protocol.client.AppendAckDecoder;
import io.queueenterprise.protocol.client.AppendBatchEncoder;
import io.queueenterprise.protocol.client.AppendEncoder;
import io.queueenterprise.protocol.client.AppendPendingDecoder;
import io.queueenterprise.protocol.client.ChallengeDecoder;
import io.queueenterprise.protocol.client.ClaimEncoder;
import io.queueenterprise.protocol.client.ClientAckMode;
import io.queueenterprise.protocol.client.ClientCredential;
import io.queueenterprise.protocol.client.ClientFrameDecoder;
import io.queueenterprise.protocol.client.ClientFrameDecoders;
import io.queueenterprise.protocol.client.ClientFrameMac;
import io.queueenterprise.protocol.client.ClientFrameType;
import io.queueenterprise.protocol.client.ClientProtocol;
import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.protocol.client.ConnectEncoder;
import io.queueenterprise.protocol.client.ConnectedDecoder;
import io.queueenterprise.protocol.client.MalformedClientFrameException;
import io.queueenterprise.protocol.client.ProofEncoder;
import io.queueenterprise.protocol.client.RefusedDecoder;
import io.queueenterprise.protocol.client.TailMode;
import io.queueenterprise.protocol.client.WriteTag;
import io.queueenterprise.protocol.client.WriterClaim;
import io.queueenterprise.crypto.WriteKeys;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.IoUtil;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * A replicated queue reached over the network: appends go to the cluster's leader over Aeron (UDP), sealed here
 * with the client's own keys before anything leaves the process; nodes and the network only see envelopes.
 *
 * <pre>{@code
 * try (RemoteQueue queue = RemoteQueue.builder("replica-0:40120", "replica-1:40120", "replica-2:40120")
 *         .queue("orders").clientCredential(Path.of("/etc/qe/client/credential")).keyDirectory(Path.of("/etc/qe/keys"))
 *         .build();
 *      QueueAppender appender = queue.createAppender()) {
 *     long index = appender.write(bytes); // returns once the queue's ack mode is met
 * }
 * }</pre>
 *
 * <p>Finds the leader from any node (a node that does not lead names the leader; a stale one is skipped),
 * reconnects by itself with bounded backoff, and retries an unacknowledged append with the same sealed envelope:
 * the leader recognises a retry by the envelope's writer epoch and sequence and answers with the original index, so
 * each write is in the queue at most once, also across a failover. One in-flight append at a time.
 *
 * <p>Driven by the calling thread (an embedded Aeron media driver in invoker mode, or the application's own
 * {@link Aeron} client given to {@link Builder#aeron}; no background thread): NOT thread-safe; one appender per remote
 * queue. The protocol runs against a {@link ClientTransport} ({@link AeronClientTransport} here, a fake node in unit
 * tests); a write is an {@link AppendMachine}, stepped by {@link #append} until acknowledged, refused or out of time.
 */
public final class RemoteQueue implements AutoCloseable {
    public static final int STREAM_ID = 0x5143;
    /** Term length of the client's publication to a node: its largest message is an eighth of it (512 KiB). */
    static final int TERM_LENGTH = 4 * 1024 * 1024;
    private static final long HANDSHAKE_STEP_NANOS = 1_000_000_000L;
    static final long MAX_BACKOFF_NANOS = 500_000_000L;
    /**
     * Default window: 1,024 appends or 1 MiB of frames, whichever is reached first. 1 MiB is half the Aeron
     * publication's window over its 4 MiB term (Aeron back-pressures beyond it anyway), so the whole window can be sent
     * again after a failover without waiting; 1,024 small appends in flight keep a 40-byte stream going at over
     * 1 M appends/s across a 1 ms round trip.
     */
    public static final int DEFAULT_WINDOW_COUNT = 1024;
    public static final int DEFAULT_WINDOW_BYTES = 1024 * 1024;
    /** The node holds at most 8,192 acknowledgements per connection: twice this (a window and its resends). */
    public static final int MAX_WINDOW_COUNT = ClientProtocol.MAX_WINDOW_APPENDS;

    private final String queueName;
    private final List<InetSocketAddress> addresses;
    private final ClientCredential credential;
    private final ClientFrameMac handshakeMac;
    /** This client's identity key, or null: a client that proves the cluster's client credential only. */
    private final io.queueenterprise.crypto.IdentityKey identity;
    /** Its name as CONNECT carries it; empty without an identity. */
    private final String clientName;
    private final KeyRing keyRing;
    private final CipherMode cipherMode;
    private final Duration ackTimeout;
    private final Duration backPressureTimeout;
    private final long sendBatchingNanos;
    private final Duration connectTimeout;
    private final SecureRandom random = new SecureRandom();
    private final ClientTransport transport;
    private final LongSupplier clock;
    private final String replyHost;
    private final int replyPort;
    private final ClientTransport.FrameHandler frameHandler = this::onFrame;
    private final IdleStrategy idle;
    private final int windowCount;
    private final int windowBytes;
    /** The appends in flight, and the machine that sends them (made with the first appender, reused by the next). */
    private AppendWindow window;
    private AppendMachine appendMachine;
    /** The decoders of frames the queue takes (the tailer has its own: its frames arrive while one of these is read). */
    private final ClientFrameDecoders in = new ClientFrameDecoders();
    /** The frame taken last: the decoder of its type, one of {@link #in}'s ({@link #decode}). */
    ClientFrameDecoder frame;
    private final ChallengeDecoder challenge = in.challenge;
    private final ConnectedDecoder connected = in.connected;
    final RefusedDecoder refused = in.refused;
    final AppendAckDecoder appendAck = in.appendAck;
    final AppendPendingDecoder appendPending = in.appendPending;
    private final ConnectEncoder connectEncoder = new ConnectEncoder();
    private final ProofEncoder proofEncoder = new ProofEncoder();
    private final AppendEncoder appendEncoder = new AppendEncoder();
    private final AppendBatchEncoder batchEncoder = new AppendBatchEncoder();
    /**
     * The most bytes one APPEND_BATCH takes: several small appends in one frame under one session MAC, in one
     * datagram (a link's unfragmented payload may be smaller: {@link Connection#maxBatchBytes}).
     */
    static final int MAX_BATCH_BYTES = 16 * 1024;
    /** APPEND_BATCH frames, copied from the window's APPEND frames' write tags and envelopes. */
    final UnsafeBuffer batchTx = new UnsafeBuffer(new byte[MAX_BATCH_BYTES]);
    private final ClaimEncoder claimEncoder = new ClaimEncoder();
    /** CLAIM frames (apart from {@link #tx}, which holds the sealed envelope while a write is under way). */
    final ExpandableArrayBuffer claimTx = new ExpandableArrayBuffer(256);
    private WriterClaim writerClaim;
    /** Write tags by key version, derived from the master keys as envelopes name them. */
    private final Int2ObjectHashMap<WriteTag> writeTags = new Int2ObjectHashMap<>();
    private final ExpandableArrayBuffer rx = new ExpandableArrayBuffer(4096);
    /** Handshake frames, apart from {@link #tx} so a reconnect does not overwrite the envelope waiting there. */
    private final ExpandableArrayBuffer hs = new ExpandableArrayBuffer(1024);

    /** The connection whose frames {@link #onFragment} takes, and the frame it took (rxLength > 0). */
    private long awaited;
    private int rxLength;

    private Connection connection;
    InetSocketAddress leaderHint;
    long highestTerm;
    private QueueDescriptor descriptor;
    private RemoteAppender appender;
    private RemoteTailer tailer;
    /** The connection whose frames go to {@link #tailer} (0: none). */
    private long tailConnectionId;
    private boolean closed;

    /** One authenticated connection to one node. */
    static final class Connection {
        final InetSocketAddress node;
        final ClientTransport.Link link;
        final long id;
        ClientFrameMac mac;
        byte[] clientNonce;
        byte[] nodeNonce;
        /** The writer epoch this connection claimed, when {@link #claimed} (a new connection claims again). */
        long claimedEpoch;
        boolean claimed;
        /** CLAIMs sent on this connection (a node verifies {@link WriterClaim#MAX_PER_CONNECTION}). */
        int claims;
        long txSequence;
        long rxSequence;
        long term;
        boolean leads;
        int queue;
        ClientAckMode ackMode;
        int maxEnvelope;
        /** The most bytes an APPEND_BATCH on this link takes: {@link #MAX_BATCH_BYTES}, or one datagram's payload. */
        int maxBatchBytes;
        long lastHeardNanos;
        /** Where a node that does not lead says the leader takes clients; null when it knows none. */
        InetSocketAddress leaderAddress;

        Connection(InetSocketAddress node, ClientTransport.Link link, long id) {
            this.node = node;
            this.link = link;
            this.id = id;
        }
    }

    private RemoteQueue(Builder b, KeyRing ring, ClientCredential credential) {
        this.identity = b.identity;
        this.clientName = b.clientName == null ? "" : b.clientName;
        this.queueName = b.queue;
        this.addresses = List.copyOf(b.addresses);
        this.credential = credential;
        this.handshakeMac = credential.handshakeMac();
        this.keyRing = ring;
        this.cipherMode = b.cipherMode;
        this.ackTimeout = b.ackTimeout;
        this.backPressureTimeout = b.backPressureTimeout;
        this.sendBatchingNanos = b.sendBatching == null ? SEND_BATCHING_ADAPTIVE : b.sendBatching.toNanos();
        this.connectTimeout = b.connectTimeout;
        this.clock = b.clock;
        this.idle = b.idle != null ? b.idle : new BackoffIdleStrategy(10, 20, 1_000, 100_000);
        if (b.transport != null) {
            this.transport = b.transport;
        } else {
            String host = b.replyHost != null ? b.replyHost : localAddressTowards(addresses.get(0));
            this.transport = b.aeron != null ? AeronClientTransport.onApplicationAeron(b.aeron, host, b.replyPort)
                    : AeronClientTransport.embedded(b.aeronDirectory != null ? b.aeronDirectory
                    : Path.of(IoUtil.tmpDirName(), "qe-client-" + Long.toHexString(random.nextLong())), host, b.replyPort);
        }
        this.replyHost = transport.replyHost();
        this.replyPort = transport.replyPort();
        this.windowCount = b.windowCount;
        this.windowBytes = b.windowBytes;
    }

    public static Builder builder(String... addresses) {
        return new Builder(List.of(addresses));
    }

    public static Builder builder(List<String> addresses) {
        return new Builder(addresses);
    }

    public String name() {
        return queueName;
    }

    /** The queue's descriptor as the leader sent it, verified with this client's keys. */
    public QueueDescriptor descriptor() {
        return descriptor;
    }

    /** The node this client is connected to now, or null. */
    public InetSocketAddress connectedNode() {
        return connection == null ? null : connection.node;
    }

    /**
     * The appender (one per remote queue): each {@code write} returns the excerpt's index once the queue's ack mode is
     * met. Its asynchronous {@code writeAsync} needs a listener: see {@link #createAppender(AppendListener)}.
     */
    public RemoteAppender createAppender() {
        return createAppender(null);
    }

    /**
     * The appender (one per remote queue), whose {@link RemoteAppender#writeAsync} appends without waiting: up to the
     * window ({@link Builder#window}) in flight, each one's index or failure handed to {@code listener}, oldest first,
     * on the calling thread from within the appender's calls ({@link RemoteAppender#poll}, {@code writeAsync},
     * {@code write}, {@link RemoteAppender#flush}).
     */
    public RemoteAppender createAppender(AppendListener listener) {
        checkOpen();
        if (appender != null) {
            throw new IllegalStateException("queue '" + queueName + "': a remote queue has one appender; close it first");
        }
        KeyRing ring = keyRing;
        ExcerptSealer sealer = new ExcerptSealer(new QueueIdentity(descriptor.name(), descriptor.incarnationId()), () -> ring,
                cipherMode, CryptoEngine.JCE, WriterEpochs.of(this::newWriterClaim));
        if (window == null) {
            window = new AppendWindow(windowCount, windowBytes);
        }
        appender = new RemoteAppender(this, sealer, window, listener);
        appendMachine = new AppendMachine(this, window, appender, ackTimeout.toNanos(), backPressureTimeout.toNanos());
        return appender;
    }

    void appenderClosed() {
        appender = null;
    }

    /** A new writer epoch: its key pair, which claims it on every connection ({@link WriterClaim}). */
    private long newWriterClaim() {
        writerClaim = WriterClaim.generate();
        return writerClaim.epoch();
    }

    /** The write tag of key version {@code keyId} ({@link WriteKeys}: derived from that master key and the queue name). */
    WriteTag writeTag(int keyId) {
        WriteTag tag = writeTags.get(keyId);
        if (tag == null) {
            tag = new WriteTag(WriteKeys.derive(keyRing.key(keyId), queueName));
            writeTags.put(keyId, tag);
        }
        return tag;
    }

    /** The claim of the epoch the appender seals under now, or null before the first. */
    WriterClaim writerClaim() {
        return writerClaim;
    }

    /** Encodes and signs, into {@link #claimTx}, the CLAIM of the current epoch on {@code c}; its length. */
    int encodeClaim(Connection c) {
        WriterClaim claim = writerClaim;
        int length = claimEncoder.wrap(claimTx, 0).encode(c.id, ++c.txSequence, claim.epoch(), claim.publicKey(),
                claim.sign(c.id, c.clientNonce, c.nodeNonce));
        c.mac.sign(claimTx, 0, length);
        return length;
    }

    /**
     * A tailer (one per remote queue) over any replica, from the start unless moved; replicated reads when the queue's
     * ack mode is REPLICATED_READS or QUORUM, as the library's tailer on a node-hosted queue.
     */
    public RemoteTailer createTailer() {
        checkOpen();
        return createTailer(connection != null && connection.ackMode != ClientAckMode.ASYNC ? TailMode.REPLICATED : TailMode.ALL, null);
    }

    /**
     * A tailer in {@code mode}, served by {@code preferredNode} ("host:port" of a node's client endpoint; null: the
     * nodes in the order given) while it answers, then by another replica.
     */
    public RemoteTailer createTailer(TailMode mode, String preferredNode) {
        checkOpen();
        if (tailer != null) {
            throw new IllegalStateException("queue '" + queueName + "': a remote queue has one tailer; close it first");
        }
        java.util.Objects.requireNonNull(mode, "mode");
        InetSocketAddress preferred = preferredNode == null ? null : Builder.parse(queueName, preferredNode);
        tailer = new RemoteTailer(this, mode, preferred);
        return tailer;
    }

    void tailerClosed() {
        tailer = null;
        tailConnectionId = 0;
    }

    /** Routes frames of connection {@code id} to {@code t} from now on (null: none). */
    void tailConnection(RemoteTailer t, long id) {
        tailConnectionId = t == null ? 0 : id;
    }

    /** A connection for a tail: any node that hosts the queue, leader or not; null when it cannot be used now. */
    Connection handshakeForTail(InetSocketAddress node, long deadline, StringBuilder answers) {
        return handshake(node, deadline, answers);
    }

    java.util.List<InetSocketAddress> addresses() {
        return addresses;
    }

    KeyRing keyRing() {
        return keyRing;
    }

    CipherMode cipherMode() {
        return cipherMode;
    }

    long connectTimeoutNanos() {
        return connectTimeout.toNanos();
    }

    SecureRandom random() {
        return random;
    }

    /** One turn of the embedded driver, the client and the reply subscription; the work done. */
    int pollOnce() {
        return work();
    }

    /** One turn, idling (backing off) when there was nothing to do. */
    void pollOrIdle() {
        if (work() == 0) {
            idle.idle();
        } else {
            idle.reset();
        }
    }

    // ------------------------------------------------------------------------------------------------ append

    /** The append step machine (tests look at its state and counters). */
    AppendMachine appendMachine() {
        return appendMachine;
    }

    /** The connection appends go to now, or null. */
    Connection connection() {
        return connection;
    }

    String queueName() {
        return queueName;
    }

    /** Encodes and signs the APPEND around the envelope in {@code frames} at {@code offset} for {@code c}, with the next frame sequence; its length. */
    int encodeAppend(Connection c, org.agrona.MutableDirectBuffer frames, int offset, long epoch, int writerSequence, int envelopeLength) {
        int length = appendEncoder.wrap(frames, offset).encodeAround(c.id, ++c.txSequence, c.queue, highestTerm, epoch, writerSequence, envelopeLength);
        c.mac.sign(frames, offset, length);
        return length;
    }

    /**
     * Encodes and signs, into {@link #batchTx}, one APPEND_BATCH of the window's {@code count} appends from
     * {@code from} (an offset from its head; consecutive writer sequences); its length.
     */
    int encodeAppendBatch(Connection c, AppendWindow window, int from, int count) {
        AppendBatchEncoder e = batchEncoder.wrap(batchTx, 0).begin(c.id, ++c.txSequence, c.queue, highestTerm, window.epoch(),
                window.sequence(from));
        for (int k = 0; k < count; k++) {
            e.entry(window.frames(), window.offset(from + k) + ClientProtocol.APPEND_WRITE_TAG, window.envelopeLength(from + k));
        }
        int length = e.end();
        c.mac.sign(batchTx, 0, length);
        return length;
    }

    long ackTimeoutNanos() {
        return ackTimeout.toNanos();
    }

    /** {@link #sendBatchingNanos()} when the builder was given none: see {@link Builder#sendBatching}. */
    static final long SEND_BATCHING_ADAPTIVE = -1;
    /**
     * The default's threshold: with this many appends sent and not yet acknowledged the client is streaming ahead of
     * its acknowledgements, and writes may wait for each other until none is in flight. 16: with 64 a writer sent
     * about 200 appends one datagram each at every start of a stream before batching began (a leader duty cycle each);
     * a writer below capacity on a LAN keeps a few in flight (rate × round trip: 100 K/s × 50 µs is 5).
     */
    static final int ADAPTIVE_IN_FLIGHT = 16;
    /** The default's linger past that threshold: 50 µs, where the sweep's plateau began (docs/performance.md). */
    static final long ADAPTIVE_LINGER_NANOS = 50_000;

    /**
     * How long a pipelined write may leave its append for a later call to send (0: never), or
     * {@link #SEND_BATCHING_ADAPTIVE}.
     */
    long sendBatchingNanos() {
        return sendBatchingNanos;
    }

    long backPressureTimeoutNanos() {
        return backPressureTimeout.toNanos();
    }

    /** Idles the calling thread after a step that did {@code work} (0: backs off). */
    void idle(int work) {
        if (work == 0) {
            idle.idle();
        } else {
            idle.reset();
        }
    }

    long nanoTime() {
        return clock.getAsLong();
    }

    // ------------------------------------------------------------------------------------------------ connect

    /** Connects to the node that leads the queue, trying the hint, then every address, with bounded backoff. */
    void connectToLeader(long deadline) {
        long backoff = 10_000_000L;
        StringBuilder answers = new StringBuilder();
        while (true) {
            List<InetSocketAddress> candidates = new ArrayList<>();
            if (leaderHint != null) {
                candidates.add(leaderHint);
            }
            for (InetSocketAddress a : addresses) {
                if (!a.equals(leaderHint)) {
                    candidates.add(a);
                }
            }
            answers.setLength(0);
            for (int i = 0; i < candidates.size(); i++) {
                InetSocketAddress candidate = candidates.get(i);
                if (nanoTime() - deadline > 0) {
                    break;
                }
                Connection c = handshake(candidate, Math.min(deadline, nanoTime() + HANDSHAKE_STEP_NANOS), answers);
                if (c == null) {
                    continue;
                }
                if (c.leads && c.term >= highestTerm) {
                    highestTerm = c.term;
                    connection = c;
                    leaderHint = candidate;
                    return;
                }
                c.link.close();
                if (c.leads) {
                    answers.append(candidate).append(": leads a stale term ").append(c.term).append("; ");
                }
                if (c.leaderAddress != null && !candidates.subList(i + 1, candidates.size()).contains(c.leaderAddress)) {
                    candidates.add(i + 1, c.leaderAddress); // follow the redirect next
                }
            }
            if (nanoTime() - deadline > 0) {
                throw new RemoteQueueException(queueName, RemoteQueueException.Reason.NO_LEADER, null, false,
                        "no node of " + addresses + " led the queue in time; answers: " + answers, null);
            }
            sleepUntil(Math.min(deadline, nanoTime() + backoff));
            backoff = Math.min(MAX_BACKOFF_NANOS, backoff * 2);
        }
    }

    /**
     * Runs the challenge-response with one node. Null (with the reason appended to {@code answers}) when the node
     * cannot be reached or refuses for a reason another node may not have; throws for a credential or key problem.
     */
    private Connection handshake(InetSocketAddress node, long deadline, StringBuilder answers) {
        ClientTransport.Link publication = transport.connect(node);
        Connection c = new Connection(node, publication, random.nextLong());
        boolean ok = false;
        try {
            while (!publication.isConnected()) {
                if (nanoTime() - deadline > 0) {
                    answers.append(node).append(": not reachable; ");
                    return null;
                }
                work();
            }
            byte[] clientNonce = new byte[ClientProtocol.NONCE_LENGTH];
            random.nextBytes(clientNonce);
            io.queueenterprise.crypto.EphemeralKey ephemeral = io.queueenterprise.crypto.EphemeralKey.generate(random);
            byte[] clientEphemeral = ephemeral.publicKey();
            int length = connectEncoder.wrap(hs, 0).encode(c.id, clientNonce, clientEphemeral, queueName, replyHost, replyPort,
                    clientName);
            handshakeMac.sign(hs, 0, length);
            c.txSequence = 1;
            if (!offerHandshake(publication, length, deadline)) {
                answers.append(node).append(": not reachable; ");
                return null;
            }
            if (!awaitHandshakeFrame(c, deadline)) {
                answers.append(node).append(": no answer to CONNECT; ");
                return null;
            }
            if (frame.type() == ClientFrameType.REFUSED) {
                return refusedInHandshake(node, answers, c);
            }
            if (frame.type() != ClientFrameType.CHALLENGE || !handshakeMac.verify(frame)) {
                throw new RemoteQueueException(queueName, RemoteQueueException.Reason.UNAUTHENTICATED,
                        "node " + node + " answered with a frame that does not verify under this client's credential: the"
                                + " client credential differs from the cluster's (or this is not a node of the cluster)");
            }
            byte[] echoed = new byte[ClientProtocol.NONCE_LENGTH];
            byte[] nodeNonce = new byte[ClientProtocol.NONCE_LENGTH];
            byte[] nodeProof = new byte[ClientProtocol.PROOF_LENGTH];
            byte[] nodeEphemeral = new byte[ClientProtocol.EPHEMERAL_LENGTH];
            challenge.clientNonce(echoed);
            challenge.nodeNonce(nodeNonce);
            challenge.nodeProof(nodeProof);
            challenge.nodeEphemeral(nodeEphemeral);
            byte[] shared = ephemeral.agree(nodeEphemeral);
            if (!Arrays.equals(echoed, clientNonce) || shared == null
                    || !ClientCredential.proofEquals(nodeProof, credential.proof("node", c.id, queueName, clientName, clientNonce,
                    nodeNonce, clientEphemeral, nodeEphemeral))) {
                throw new RemoteQueueException(queueName, RemoteQueueException.Reason.UNAUTHENTICATED,
                        "node " + node + "'s proof does not verify: the client credential differs from the cluster's");
            }
            c.rxSequence = frame.sequence();
            byte[] proof = credential.proof("client", c.id, queueName, clientName, clientNonce, nodeNonce, clientEphemeral,
                    nodeEphemeral);
            byte[] signature = identity == null ? new byte[ClientProtocol.SIGNATURE_LENGTH]
                    : identity.sign(ClientCredential.signedTranscript(c.id, queueName, clientName, clientNonce, nodeNonce,
                    clientEphemeral, nodeEphemeral));
            length = proofEncoder.wrap(hs, 0).encode(c.id, ++c.txSequence, proof, signature);
            handshakeMac.sign(hs, 0, length);
            if (!offerHandshake(publication, length, deadline)) {
                answers.append(node).append(": lost during the handshake; ");
                return null;
            }
            c.mac = credential.sessionMac(c.id, clientNonce, nodeNonce, shared, clientEphemeral, nodeEphemeral, clientName);
            Arrays.fill(shared, (byte) 0);
            c.clientNonce = clientNonce;
            c.nodeNonce = nodeNonce;
            if (!awaitHandshakeFrame(c, deadline)) {
                answers.append(node).append(": no answer to PROOF; ");
                return null;
            }
            if (frame.type() == ClientFrameType.REFUSED) {
                return refusedInHandshake(node, answers, c);
            }
            if (frame.type() != ClientFrameType.CONNECTED || !c.mac.verify(frame)) {
                answers.append(node).append(": an unexpected ").append(frame.type()).append("; ");
                return null;
            }
            c.rxSequence = frame.sequence();
            c.term = connected.term();
            c.leads = connected.leads();
            c.queue = connected.queue();
            c.ackMode = connected.ackMode();
            c.maxEnvelope = Math.min(connected.maxEnvelope(), publication.maxMessageLength() - ClientProtocol.APPEND_OVERHEAD);
            c.maxBatchBytes = Math.min(MAX_BATCH_BYTES, publication.maxPayloadLength());
            c.lastHeardNanos = nanoTime();
            c.leaderAddress = connected.leaderPort() == 0 ? null
                    : InetSocketAddress.createUnresolved(connected.leaderHost(), connected.leaderPort());
            byte[] descriptorBytes = connected.descriptor();
            if (c.leads || descriptorBytes.length > 0) {
                acceptDescriptor(node, descriptorBytes); // a follower may redirect before the descriptor reached it
            }
            if (!c.leads) {
                answers.append(node).append(": ").append(c.leaderAddress == null ? "knows no leader" : "redirects to " + c.leaderAddress)
                        .append(" (term ").append(c.term).append("); ");
            }
            ok = true;
            return c;
        } finally {
            if (!ok) {
                publication.close();
            }
        }
    }

    private Connection refusedInHandshake(InetSocketAddress node, StringBuilder answers, Connection c) {
        ClientRefusal r = refused.reason();
        String message = refused.message();
        boolean authentic = handshakeMac.verify(frame) || c.mac != null && c.mac.verify(frame);
        if (r == ClientRefusal.UNAUTHENTICATED) {
            // cannot be verified when the credentials differ: that is what it says
            throw new RemoteQueueException(queueName, RemoteQueueException.Reason.UNAUTHENTICATED, r, false,
                    "node " + node + " refused the connection: " + message + (authentic ? ""
                            : " (the refusal itself does not verify under this client's credential either)"), null);
        }
        if (!authentic) {
            answers.append(node).append(": a refusal that does not verify (ignored); ");
            return null;
        }
        if (!r.retryable()) {
            throw new RemoteQueueException(queueName, RemoteQueueException.Reason.REFUSED, r, false,
                    "node " + node + " refused the connection: " + message, null);
        }
        answers.append(node).append(": ").append(r).append(' ').append(message).append("; ");
        return null;
    }

    private void acceptDescriptor(InetSocketAddress node, byte[] bytes) {
        QueueDescriptor d;
        try {
            d = QueueDescriptor.verifiedForRemoteWriter(queueName + " (from " + node + ")", bytes, keyRing, cipherMode);
        } catch (QueueConfigurationException e) {
            throw new RemoteQueueException(queueName, RemoteQueueException.Reason.DESCRIPTOR, null, false, e.getMessage(), e);
        }
        if (!d.name().equals(queueName)) {
            throw new RemoteQueueException(queueName, RemoteQueueException.Reason.DESCRIPTOR, "node " + node
                    + " sent the descriptor of queue '" + d.name() + "'");
        }
        if (descriptor != null && !Arrays.equals(descriptor.incarnationId(), d.incarnationId())) {
            throw new RemoteQueueException(queueName, RemoteQueueException.Reason.DESCRIPTOR, "node " + node
                    + " holds another incarnation of the queue than the nodes this client talked to before");
        }
        descriptor = d;
    }

    private boolean offerHandshake(ClientTransport.Link publication, int length, long deadline) {
        while (true) {
            long result = publication.offer(hs, 0, length);
            if (result > 0) {
                return true;
            }
            if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED || nanoTime() - deadline > 0) {
                return false;
            }
            work();
        }
    }

    // ------------------------------------------------------------------------------------------------ receive

    private boolean awaitHandshakeFrame(Connection c, long deadline) {
        awaited = c.id;
        rxLength = 0;
        while (rxLength == 0) {
            if (nanoTime() - deadline > 0) {
                return false;
            }
            if (work() == 0) {
                idle.idle();
            } else {
                idle.reset();
            }
        }
        return decode();
    }

    /** From now on frames of {@code c} are taken (and any frame taken before is dropped): see {@link #takeSessionFrame}. */
    void expect(Connection c) {
        awaited = c.id;
        rxLength = 0;
    }

    /**
     * The frame of the expected connection that the last poll took, when there is one and it is an authentic session
     * frame of {@code c} with a sequence above the last (forged or replayed ones are dropped): then true and the
     * decoders ({@link #frame}, {@link #appendAck}, ...) are over it until the next poll.
     */
    boolean takeSessionFrame(Connection c, long now) {
        if (rxLength == 0) {
            return false;
        }
        boolean decoded = decode();
        rxLength = 0; // the bytes stay in rx until the next poll
        if (!decoded) {
            return false;
        }
        boolean authentic = c.mac.verify(frame)
                || frame.type() == ClientFrameType.REFUSED && refused.reason() == ClientRefusal.UNAUTHENTICATED && handshakeMac.verify(frame);
        if (!authentic || frame.sequence() <= c.rxSequence) {
            return false; // forged or replayed: ignored
        }
        c.rxSequence = frame.sequence();
        c.lastHeardNanos = now;
        return true;
    }

    /** Checks the header and the body of the frame taken, with its type's decoder; false: malformed or not for a client. */
    private boolean decode() {
        try {
            frame = in.wrap(rx, 0, rxLength);
        } catch (MalformedClientFrameException e) {
            return false;
        }
        // any other type is one a node sends only to a tailer, or only a client sends
        return frame == challenge || frame == connected || frame == refused || frame == appendAck || frame == appendPending;
    }

    /** Takes one frame from the transport; false: the one before is still being looked at (it stays for the next poll). */
    private boolean onFrame(DirectBuffer buffer, int offset, int length) {
        if (length < ClientProtocol.HEADER_LENGTH + ClientProtocol.MAC_LENGTH) {
            return true;
        }
        long id = buffer.getLong(offset + ClientProtocol.CONNECTION_OFFSET, ClientProtocol.ORDER);
        if (tailConnectionId != 0 && id == tailConnectionId && tailer != null) {
            tailer.onFragment(buffer, offset, length);
            return true;
        }
        if (id != awaited) {
            return true; // not for the connection waited on (a late frame of an old one): dropped
        }
        if (rxLength != 0) {
            return false;
        }
        rx.putBytes(0, buffer, offset, length);
        rxLength = length;
        return true;
    }

    /** One turn of the transport (the embedded driver and client, and the reply subscription). */
    private int work() {
        return transport.poll(frameHandler, 16);
    }

    void sleepUntil(long until) {
        while (nanoTime() - until < 0) {
            if (work() == 0) {
                idle.idle();
            }
        }
        idle.reset();
    }

    void disconnect() {
        if (connection != null) {
            connection.link.close();
            connection = null;
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new RemoteQueueException(queueName, RemoteQueueException.Reason.CLOSED, "the remote queue is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (appender != null) {
            try {
                appender.close(); // settles the appends in flight first (each within its ack timeout)
            } catch (RuntimeException e) {
                // closing regardless: the appender's listener was told how each append settled
            }
        }
        closed = true;
        if (tailer != null) {
            tailer.close();
        }
        disconnect();
        transport.close();
        credential.close();
        if (identity != null) {
            identity.close();
        }
        writeTags.values().forEach(WriteTag::destroy);
        writeTags.clear();
    }

    // ------------------------------------------------------------------------------------------------ setup helpers

    /** The local address a UDP socket would use towards {@code node} (connect sends nothing). */
    private static String localAddressTowards(InetSocketAddress node) {
        try (DatagramSocket s = new DatagramSocket()) {
            s.connect(new InetSocketAddress(node.getHostString(), node.getPort()));
            return s.getLocalAddress().getHostAddress();
        } catch (IOException e) {
            return "127.0.0.1";
        }
    }

    // ------------------------------------------------------------------------------------------------ builder

    /** Settings; {@link #build()} checks them all and names the first bad one. */
    public static final class Builder {
        private final List<InetSocketAddress> addresses = new ArrayList<>();
        private final List<String> given;
        private String queue;
        private Path credentialFile;
        private String clientName;
        private Path identityKeyFile;
        private Path keyDirectory;
        private KeyRing keyRing;
        private CipherMode cipherMode = CipherMode.AES_128_CTR_POLY1305;
        private Duration ackTimeout = Duration.ofSeconds(5);
        private Duration backPressureTimeout = Duration.ofSeconds(1);
        private Duration connectTimeout = Duration.ofSeconds(10);
        /** Null: the adaptive default (see {@link #sendBatching}). */
        private Duration sendBatching;
        private boolean sendBatchingGiven;
        private int windowCount = DEFAULT_WINDOW_COUNT;
        private int windowBytes = DEFAULT_WINDOW_BYTES;
        private String replyHost;
        private int replyPort;
        private Path aeronDirectory;
        private Aeron aeron;
        private ClientTransport transport;
        /** Loaded by {@link #build()}; owned by the queue from there. */
        private io.queueenterprise.crypto.IdentityKey identity;
        private LongSupplier clock = System::nanoTime;
        private IdleStrategy idle;

        private Builder(List<String> addresses) {
            this.given = List.copyOf(Objects.requireNonNull(addresses, "addresses"));
        }

        /** The queue's name, as the nodes host it. */
        public Builder queue(String name) {
            this.queue = name;
            return this;
        }

        /** The cluster's client credential file (raw, hex or base64; a Secret of its own). */
        public Builder clientCredential(Path file) {
            this.credentialFile = file;
            return this;
        }

        /**
         * This client's name and its own identity key file (an Ed25519 seed: {@code qe identity --name NAME}), as the
         * nodes' authorised clients name it: CONNECT names the client and its PROOF is signed with the key. Needed by
         * nodes that authorise named clients (docs/remote-clients.md, "Per-client identity"); without it the client
         * proves the cluster's client credential only.
         */
        public Builder identity(String name, Path keyFile) {
            this.clientName = name;
            this.identityKeyFile = keyFile;
            return this;
        }

        /** The directory of the queue's data keys (the same layout as the library's); the client seals with them. */
        public Builder keyDirectory(Path directory) {
            this.keyDirectory = directory;
            return this;
        }

        /** A key ring held by the application instead of a directory. */
        public Builder keyRing(KeyRing ring) {
            this.keyRing = ring;
            return this;
        }

        /** The queue's cipher mode; the authenticated one by default. */
        public Builder cipherMode(CipherMode mode) {
            this.cipherMode = mode;
            return this;
        }

        /** How long a write waits for its acknowledgement, reconnects and retries included (default 5 s). */
        public Builder ackTimeout(Duration timeout) {
            this.ackTimeout = timeout;
            return this;
        }

        /** How long a write waits on a back-pressured publication before it fails (default 1 s). */
        public Builder backPressureTimeout(Duration timeout) {
            this.backPressureTimeout = timeout;
            return this;
        }

        /**
         * Appends in flight at once, bounded by count (1..{@value #MAX_WINDOW_COUNT}, default {@value
         * #DEFAULT_WINDOW_COUNT}) and by the bytes of their APPEND frames (64 KiB..16 MiB, default 1 MiB; one larger
         * append still goes alone). See docs/remote-clients.md for why the defaults fill a link.
         */
        public Builder window(int count, int bytes) {
            this.windowCount = count;
            this.windowBytes = bytes;
            return this;
        }

        /**
         * Lets {@link RemoteAppender#writeAsync} leave its append, while earlier ones are in flight, for a later call to
         * send together with the next ones (one datagram and one duty cycle of the leader for many appends instead of
         * one each), as long as the appender was driven less than {@code linger} ago and fewer than 64 appends wait.
         * Zero: every {@code writeAsync} sends its append before it returns (the lowest latency at any rate).
         * <b>Default</b> (no call): adaptive, zero until 16 appends are sent and unacknowledged at once, then 50 µs
         * until none is: a writer below capacity sends each append at once, and one streaming ahead of its
         * acknowledgements (whose appends already queue behind others) sends in batches, which is what lets it reach the
         * leader's capacity instead of costing the leader one duty cycle per append (docs/performance.md, "The adaptive
         * default"). With the embedded media driver the
         * application's thread is the driver, so what waits is sent only by the appender's next {@code writeAsync},
         * {@code poll}, {@code flush}, blocking write or {@code close}: for a streaming writer that polls (it must, to
         * hear its outcomes), not for one that writes a burst and then goes quiet without polling. For throughput,
         * 50-100 µs: a frame then carries about 50 small appends, and a 40-byte stream kept about 1.4 times what 20 µs
         * kept (docs/performance.md, "The linger, swept"); with a full window each append waits behind hundreds of
         * others anyway.
         */
        public Builder sendBatching(Duration linger) {
            this.sendBatching = linger;
            this.sendBatchingGiven = true;
            return this;
        }

        /** How long {@link #build()} looks for the leader (default 10 s). */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        /** The address nodes answer to (default: the local address towards the first node); port 0: any free one. */
        public Builder replyEndpoint(String host, int port) {
            this.replyHost = host;
            this.replyPort = port;
            return this;
        }

        /** Where the embedded media driver keeps its files (default: a fresh directory under /dev/shm or tmp). */
        public Builder aeronDirectory(Path directory) {
            this.aeronDirectory = directory;
            return this;
        }

        /**
         * The application's own Aeron client (and the media driver it is connected to): the remote queue then
         * launches no driver, adds its publications and reply subscription to this client, invokes its conductor only
         * when it runs in invoker mode ({@code useConductorAgentInvoker}), and closes only what it added, never the
         * client itself. Not with {@link #aeronDirectory}.
         */
        public Builder aeron(Aeron aeron) {
            this.aeron = aeron;
            return this;
        }

        /** Test seam: the transport to run on instead of Aeron (a fake node). */
        Builder transport(ClientTransport transport) {
            this.transport = transport;
            return this;
        }

        /** Test seam: the clock every timeout is measured with (default {@link System#nanoTime()}). */
        Builder clock(LongSupplier clock) {
            this.clock = clock;
            return this;
        }

        /** Test seam: how the calling thread waits while nothing arrives (default: spin, yield, then park up to 100 µs). */
        Builder idleStrategy(IdleStrategy idle) {
            this.idle = idle;
            return this;
        }

        /**
         * Checks the settings, loads the credential and keys, and connects to the leader.
         *
         * @throws RemoteQueueException BAD_CONFIGURATION naming the setting, or how connecting failed
         */
        public RemoteQueue build() {
            String label = queue == null ? "?" : queue;
            if (given.isEmpty()) {
                throw bad(label, "addresses: none given; name at least one node as host:port");
            }
            for (String a : given) {
                addresses.add(parse(label, a));
            }
            if (queue == null || queue.isBlank()) {
                throw bad(label, "queue: not set");
            }
            if (credentialFile == null) {
                throw bad(label, "clientCredential: not set (the cluster's client credential file)");
            }
            if (keyDirectory == null && keyRing == null) {
                throw bad(label, "keyDirectory: not set (the queue's data keys; the client seals, nodes hold no key)");
            }
            if (keyDirectory != null && keyRing != null) {
                throw bad(label, "keyDirectory and keyRing: give one, not both");
            }
            if (cipherMode == null) {
                throw bad(label, "cipherMode: null");
            }
            positive(label, "ackTimeout", ackTimeout);
            positive(label, "backPressureTimeout", backPressureTimeout);
            positive(label, "connectTimeout", connectTimeout);
            if (sendBatchingGiven && (sendBatching == null || sendBatching.isNegative()
                    || sendBatching.compareTo(Duration.ofSeconds(1)) > 0)) {
                throw bad(label, "sendBatching: " + sendBatching + " is not in 0..1 s (zero: every write sent at once)");
            }
            if (windowCount < 1 || windowCount > MAX_WINDOW_COUNT) {
                throw bad(label, "window: count " + windowCount + " is not in 1.." + MAX_WINDOW_COUNT);
            }
            if (windowBytes < 64 * 1024 || windowBytes > 16 * 1024 * 1024) {
                throw bad(label, "window: " + windowBytes + " bytes is not in 64 KiB..16 MiB");
            }
            if (aeron != null && aeronDirectory != null) {
                throw bad(label, "aeron and aeronDirectory: give one, not both (an application's Aeron client has its own directory)");
            }
            if (aeron != null && aeron.isClosed()) {
                throw bad(label, "aeron: the application's Aeron client is closed");
            }
            if (replyPort < 0 || replyPort > 65535) {
                throw bad(label, "replyEndpoint: port " + replyPort + " is not in 0..65535");
            }
            if (clientName != null && !clientName.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,62}")) {
                throw bad(label, "identity: '" + clientName + "' is not a client name (1 to 63 letters, digits, '.', '_' or '-',"
                        + " starting with a letter or digit)");
            }
            if ((clientName == null) != (identityKeyFile == null)) {
                throw bad(label, "identity: a name and a key file, both");
            }
            io.queueenterprise.crypto.IdentityKey identity = null;
            if (identityKeyFile != null) {
                try {
                    identity = io.queueenterprise.crypto.IdentityKey.load(identityKeyFile, "client identity key");
                } catch (io.queueenterprise.crypto.CredentialFile.UnusableCredentialException e) {
                    throw bad(label, "identity: " + e.getMessage());
                }
            }
            ClientCredential credential;
            try {
                credential = ClientCredential.load(credentialFile);
            } catch (ClientCredential.ClientCredentialException e) {
                if (identity != null) {
                    identity.close();
                }
                throw bad(label, "clientCredential: " + e.getMessage());
            }
            this.identity = identity;
            KeyRing ring = keyRing;
            if (ring == null) {
                try {
                    ring = KeyRingSource.read(keyDirectory);
                } catch (KeyFileException e) {
                    credential.close();
                    if (identity != null) {
                        identity.close();
                    }
                    throw bad(label, "keyDirectory: " + e.getMessage());
                }
            }
            RemoteQueue q;
            try {
                q = new RemoteQueue(this, ring, credential);
            } catch (RuntimeException e) {
                credential.close();
                if (identity != null) {
                    identity.close();
                }
                throw e;
            }
            try {
                q.connectToLeader(q.nanoTime() + connectTimeout.toNanos());
            } catch (RuntimeException e) {
                q.close();
                throw e;
            }
            return q;
        }

        static InetSocketAddress parse(String label, String address) {
            int colon = address == null ? -1 : address.lastIndexOf(':');
            if (colon <= 0 || colon == address.length() - 1) {
                throw bad(label, "addresses: '" + address + "' is not host:port");
            }
            int port;
            try {
                port = Integer.parseInt(address.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw bad(label, "addresses: '" + address + "' has no numeric port");
            }
            if (port < 1 || port > 65535) {
                throw bad(label, "addresses: '" + address + "': port " + port + " is not in 1..65535");
            }
            return InetSocketAddress.createUnresolved(address.substring(0, colon), port);
        }

        private static void positive(String label, String field, Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw bad(label, field + ": " + d + " is not a duration above zero");
            }
        }

        private static RemoteQueueException bad(String label, String message) {
            return new RemoteQueueException(label, RemoteQueueException.Reason.BAD_CONFIGURATION, message);
        }
    }
}
