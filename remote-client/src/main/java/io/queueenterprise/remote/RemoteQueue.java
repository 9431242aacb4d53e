package io.queueenterprise.remote;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.ControlledFragmentAssembler;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.Header;
import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.ExcerptSealer;
import io.queueenterprise.crypto.KeyFileException;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.KeyRingSource;
import io.queueenterprise.crypto.QueueIdentity;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueConfigurationException;
import io.queueenterprise.queue.QueueDescriptor;
import io.queueenterprise.remote.wire.ClientCredential;
import io.queueenterprise.remote.wire.ClientFrame;
import io.queueenterprise.remote.wire.ClientFrameMac;
import io.queueenterprise.remote.wire.ClientFrameType;
import io.queueenterprise.remote.wire.ClientRefusal;
import io.queueenterprise.remote.wire.MalformedClientFrameException;
import io.queueenterprise.remote.wire.TailMode;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.IoUtil;
import org.agrona.concurrent.AgentInvoker;
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
 * <p>Driven by the calling thread (an embedded Aeron media driver in invoker mode, no background thread): NOT
 * thread-safe; one appender per remote queue.
 */
public final class RemoteQueue implements AutoCloseable {
    public static final int STREAM_ID = 0x5143;
    /** Term length of the client's publication to a node: its largest message is an eighth of it (512 KiB). */
    static final int TERM_LENGTH = 4 * 1024 * 1024;
    private static final long RESEND_NANOS = 250_000_000L;
    private static final long SILENCE_NANOS = 1_000_000_000L;
    private static final long IDLE_RECONNECT_NANOS = 10_000_000_000L;
    private static final long HANDSHAKE_STEP_NANOS = 1_000_000_000L;
    private static final long MAX_BACKOFF_NANOS = 500_000_000L;
    /** How long the embedded driver and client tolerate not being driven (see the constructor): a day. */
    private static final long EMBEDDED_LIVENESS_TIMEOUT_NS = 86_400_000_000_000L;

    private final String queueName;
    private final List<InetSocketAddress> addresses;
    private final ClientCredential credential;
    private final ClientFrameMac handshakeMac;
    private final KeyRing keyRing;
    private final CipherMode cipherMode;
    private final Duration ackTimeout;
    private final Duration backPressureTimeout;
    private final Duration connectTimeout;
    private final SecureRandom random = new SecureRandom();
    private final Path aeronDirectory;
    private final MediaDriver driver;
    private final Aeron aeron;
    private final AgentInvoker driverInvoker;
    private final AgentInvoker conductorInvoker;
    private final Subscription replies;
    private final String replyHost;
    private final int replyPort;
    private final ControlledFragmentAssembler assembler = new ControlledFragmentAssembler(this::onFragment);
    private final IdleStrategy idle = new BackoffIdleStrategy(10, 20, 1_000, 100_000);
    private final ClientFrame frame = new ClientFrame();
    private final ExpandableArrayBuffer rx = new ExpandableArrayBuffer(4096);
    /** The APPEND frame: the appender seals straight into it; kept intact across reconnects for the retry. */
    final ExpandableArrayBuffer tx = new ExpandableArrayBuffer(64 * 1024);
    /** Handshake frames, apart from {@link #tx} so a reconnect does not overwrite the envelope waiting there. */
    private final ExpandableArrayBuffer hs = new ExpandableArrayBuffer(1024);

    /** The connection whose frames {@link #onFragment} takes, and the frame it took (rxLength > 0). */
    private long awaited;
    private int rxLength;

    private Connection connection;
    private InetSocketAddress leaderHint;
    private long highestTerm;
    private QueueDescriptor descriptor;
    private RemoteAppender appender;
    private RemoteTailer tailer;
    /** The connection whose frames go to {@link #tailer} (0: none). */
    private long tailConnectionId;
    private boolean closed;

    /** One authenticated connection to one node. */
    static final class Connection {
        final InetSocketAddress node;
        final ExclusivePublication publication;
        final long id;
        ClientFrameMac mac;
        long txSequence;
        long rxSequence;
        long term;
        boolean leads;
        int queue;
        int ackModeCode;
        int maxEnvelope;
        long lastHeardNanos;
        /** Where a node that does not lead says the leader takes clients; null when it knows none. */
        InetSocketAddress leaderAddress;

        Connection(InetSocketAddress node, ExclusivePublication publication, long id) {
            this.node = node;
            this.publication = publication;
            this.id = id;
        }
    }

    private RemoteQueue(Builder b, KeyRing ring, ClientCredential credential) {
        this.queueName = b.queue;
        this.addresses = List.copyOf(b.addresses);
        this.credential = credential;
        this.handshakeMac = credential.handshakeMac();
        this.keyRing = ring;
        this.cipherMode = b.cipherMode;
        this.ackTimeout = b.ackTimeout;
        this.backPressureTimeout = b.backPressureTimeout;
        this.connectTimeout = b.connectTimeout;
        this.replyHost = b.replyHost != null ? b.replyHost : localAddressTowards(addresses.get(0));
        this.aeronDirectory = b.aeronDirectory != null ? b.aeronDirectory
                : Path.of(IoUtil.tmpDirName(), "qe-client-" + Long.toHexString(random.nextLong()));
        driver = MediaDriver.launch(new MediaDriver.Context()
                .aeronDirectoryName(aeronDirectory.toString())
                .threadingMode(ThreadingMode.INVOKER)
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true)
                // Driver and client are driven by the application's thread, which may leave them alone for as long
                // as it neither reads nor writes: at Aeron's 10 s default the client then closed itself for good
                // ("service interval exceeded"). Their mutual liveness guards nothing in one process; nodes still
                // see a silent client at once (image liveness and connection timeouts keep their defaults).
                .clientLivenessTimeoutNs(EMBEDDED_LIVENESS_TIMEOUT_NS)
                .publicationUnblockTimeoutNs(EMBEDDED_LIVENESS_TIMEOUT_NS + 10_000_000_000L)
                .termBufferSparseFile(true)
                .publicationTermBufferLength(TERM_LENGTH)
                .warnIfDirectoryExists(false));
        driverInvoker = driver.sharedAgentInvoker();
        try {
            aeron = Aeron.connect(new Aeron.Context()
                    .aeronDirectoryName(aeronDirectory.toString())
                    .useConductorAgentInvoker(true)
                    .driverTimeoutMs(java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(EMBEDDED_LIVENESS_TIMEOUT_NS))
                    .driverAgentInvoker(driverInvoker));
        } catch (RuntimeException e) {
            driver.close();
            throw e;
        }
        conductorInvoker = aeron.conductorAgentInvoker();
        replies = aeron.addSubscription("aeron:udp?endpoint=" + replyHost + ":" + b.replyPort, STREAM_ID);
        replyPort = b.replyPort != 0 ? b.replyPort : boundPort(replies);
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

    /** The appender (one per remote queue): each write returns the excerpt's index once the queue's ack mode is met. */
    public QueueAppender createAppender() {
        checkOpen();
        if (appender != null) {
            throw new IllegalStateException("queue '" + queueName + "': a remote queue has one appender; close it first");
        }
        ExcerptSealer sealer = new ExcerptSealer(new QueueIdentity(descriptor.name(), descriptor.incarnationId()), keyRing,
                cipherMode, CryptoEngine.JCE);
        appender = new RemoteAppender(this, sealer);
        return appender;
    }

    void appenderClosed() {
        appender = null;
    }

    /**
     * A tailer (one per remote queue) over any replica, from the start unless moved; replicated reads when the queue's
     * ack mode is REPLICATED_READS or QUORUM, as the library's tailer on a node-hosted queue.
     */
    public RemoteTailer createTailer() {
        checkOpen();
        return createTailer(connection != null && connection.ackModeCode > 0 ? TailMode.REPLICATED : TailMode.ALL, null);
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

    /**
     * Sends the APPEND whose sealed envelope is in {@link #tx} at {@link ClientFrame#APPEND_ENVELOPE}, until acked,
     * refused or out of time; returns the index.
     */
    long append(long epoch, int writerSequence, int envelopeLength) {
        checkOpen();
        long start = System.nanoTime();
        long deadline = start + ackTimeout.toNanos();
        boolean sent = false;
        ClientRefusal lastRefusal = null;
        String lastProblem = "";
        long backoff = 10_000_000L;
        while (true) {
            long now = System.nanoTime();
            if (now - deadline > 0) {
                throw new RemoteQueueException(queueName, RemoteQueueException.Reason.ACK_TIMEOUT, lastRefusal, sent,
                        "no acknowledgement within " + ackTimeout.toMillis() + " ms" + (lastProblem.isEmpty() ? "" : "; last: " + lastProblem), null);
            }
            if (connection != null && (!connection.leads || now - connection.lastHeardNanos > IDLE_RECONNECT_NANOS)) {
                disconnect();
            }
            if (connection == null) {
                try {
                    connectToLeader(deadline);
                } catch (RemoteQueueException e) {
                    if (e.reason() == RemoteQueueException.Reason.NO_LEADER && sent) {
                        throw new RemoteQueueException(queueName, RemoteQueueException.Reason.ACK_TIMEOUT, lastRefusal, true,
                                "no acknowledgement within " + ackTimeout.toMillis() + " ms: " + e.getMessage(), e);
                    }
                    throw e;
                }
                if (envelopeLength > connection.maxEnvelope) {
                    throw new RemoteQueueException(queueName, RemoteQueueException.Reason.TOO_LARGE, ClientRefusal.TOO_LARGE, false,
                            "envelope of " + envelopeLength + " bytes; the node takes up to " + connection.maxEnvelope, null);
                }
            }
            Connection c = connection;
            int length = ClientFrame.encodeAppendAround(tx, c.id, ++c.txSequence, c.queue, highestTerm, epoch, writerSequence, envelopeLength);
            c.mac.sign(tx, 0, length);
            if (!offer(c, length, deadline, sent)) {
                disconnect();
                continue;
            }
            sent = true;
            long sentAt = System.nanoTime();
            // wait for this envelope's answer; resend on silence (the leader answers a retry with the original index)
            while (true) {
                long now2 = System.nanoTime();
                if (now2 - deadline > 0) {
                    break;
                }
                long waitUntil = Math.min(deadline, sentAt + RESEND_NANOS);
                if (!awaitFrame(c, waitUntil)) {
                    if (System.nanoTime() - c.lastHeardNanos > SILENCE_NANOS) {
                        lastProblem = "node " + c.node + " went silent";
                        leaderHint = null;
                        disconnect();
                    }
                    break; // resend (same connection) or reconnect
                }
                ClientFrameType type = frame.type();
                if ((type == ClientFrameType.APPEND_ACK || type == ClientFrameType.APPEND_PENDING)
                        && frame.ackEpoch() == epoch && frame.ackSequence() == writerSequence) {
                    highestTerm = Math.max(highestTerm, frame.ackTerm());
                    if (type == ClientFrameType.APPEND_ACK) {
                        return frame.ackIndex();
                    }
                    sentAt = System.nanoTime(); // pending: held for a quorum; ask again later
                    continue;
                }
                if (type == ClientFrameType.REFUSED && frame.refusedEpoch() == epoch && frame.refusedSequence() == writerSequence) {
                    ClientRefusal r = frame.refusal();
                    lastRefusal = r;
                    lastProblem = r + " from " + c.node + ": " + frame.message();
                    if (!r.retryable()) {
                        throw new RemoteQueueException(queueName, r == ClientRefusal.TOO_LARGE ? RemoteQueueException.Reason.TOO_LARGE
                                : RemoteQueueException.Reason.REFUSED, r, sent && r == ClientRefusal.REPLAYED, frame.message(), null);
                    }
                    leaderHint = frame.port() != 0 ? InetSocketAddress.createUnresolved(frame.host(), frame.port()) : null;
                    disconnect();
                    sleepUntil(Math.min(deadline, System.nanoTime() + backoff));
                    backoff = Math.min(MAX_BACKOFF_NANOS, backoff * 2);
                    break;
                }
                // an answer to an earlier write (a late ack of a retry): ignored
            }
        }
    }

    /** Offers under back-pressure up to the back-pressure timeout; false when the connection is gone. */
    private boolean offer(Connection c, int length, long deadline, boolean sentBefore) {
        long bpDeadline = System.nanoTime() + backPressureTimeout.toNanos();
        while (true) {
            long result = c.publication.offer(tx, 0, length);
            if (result > 0) {
                return true;
            }
            if (result == Publication.NOT_CONNECTED || result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
                return false;
            }
            long now = System.nanoTime();
            if (now - bpDeadline > 0 || now - deadline > 0) {
                throw new RemoteQueueException(queueName, RemoteQueueException.Reason.BACK_PRESSURE, null, sentBefore,
                        "the publication to " + c.node + " stayed back-pressured for " + backPressureTimeout.toMillis() + " ms", null);
            }
            work();
        }
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
                if (System.nanoTime() - deadline > 0) {
                    break;
                }
                Connection c = handshake(candidate, Math.min(deadline, System.nanoTime() + HANDSHAKE_STEP_NANOS), answers);
                if (c == null) {
                    continue;
                }
                if (c.leads && c.term >= highestTerm) {
                    highestTerm = c.term;
                    connection = c;
                    leaderHint = candidate;
                    return;
                }
                c.publication.close();
                if (c.leads) {
                    answers.append(candidate).append(": leads a stale term ").append(c.term).append("; ");
                }
                if (c.leaderAddress != null && !candidates.subList(i + 1, candidates.size()).contains(c.leaderAddress)) {
                    candidates.add(i + 1, c.leaderAddress); // follow the redirect next
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new RemoteQueueException(queueName, RemoteQueueException.Reason.NO_LEADER, null, false,
                        "no node of " + addresses + " led the queue in time; answers: " + answers, null);
            }
            sleepUntil(Math.min(deadline, System.nanoTime() + backoff));
            backoff = Math.min(MAX_BACKOFF_NANOS, backoff * 2);
        }
    }

    /**
     * Runs the challenge-response with one node. Null (with the reason appended to {@code answers}) when the node
     * cannot be reached or refuses for a reason another node may not have; throws for a credential or key problem.
     */
    private Connection handshake(InetSocketAddress node, long deadline, StringBuilder answers) {
        ExclusivePublication publication = aeron.addExclusivePublication("aeron:udp?endpoint=" + node.getHostString() + ":"
                + node.getPort() + "|term-length=" + TERM_LENGTH, STREAM_ID);
        Connection c = new Connection(node, publication, random.nextLong());
        boolean ok = false;
        try {
            while (!publication.isConnected()) {
                if (System.nanoTime() - deadline > 0) {
                    answers.append(node).append(": not reachable; ");
                    return null;
                }
                work();
            }
            byte[] clientNonce = new byte[ClientFrame.NONCE_LENGTH];
            random.nextBytes(clientNonce);
            int length = ClientFrame.encodeConnect(hs, c.id, clientNonce, queueName, replyHost, replyPort);
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
            byte[] echoed = new byte[ClientFrame.NONCE_LENGTH];
            byte[] nodeNonce = new byte[ClientFrame.NONCE_LENGTH];
            byte[] nodeProof = new byte[ClientFrame.PROOF_LENGTH];
            frame.bytesAt(0, echoed, ClientFrame.NONCE_LENGTH);
            frame.bytesAt(ClientFrame.NONCE_LENGTH, nodeNonce, ClientFrame.NONCE_LENGTH);
            frame.bytesAt(2 * ClientFrame.NONCE_LENGTH, nodeProof, ClientFrame.PROOF_LENGTH);
            if (!Arrays.equals(echoed, clientNonce)
                    || !ClientCredential.proofEquals(nodeProof, credential.proof("node", c.id, queueName, clientNonce, nodeNonce))) {
                throw new RemoteQueueException(queueName, RemoteQueueException.Reason.UNAUTHENTICATED,
                        "node " + node + "'s proof does not verify: the client credential differs from the cluster's");
            }
            c.rxSequence = frame.sequence();
            byte[] proof = credential.proof("client", c.id, queueName, clientNonce, nodeNonce);
            length = ClientFrame.encodeProof(hs, c.id, ++c.txSequence, proof);
            handshakeMac.sign(hs, 0, length);
            if (!offerHandshake(publication, length, deadline)) {
                answers.append(node).append(": lost during the handshake; ");
                return null;
            }
            c.mac = credential.sessionMac(c.id, clientNonce, nodeNonce);
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
            c.term = frame.connectedTerm();
            c.leads = frame.leads();
            c.queue = frame.connectedQueue();
            c.ackModeCode = frame.ackModeCode();
            c.maxEnvelope = Math.min(frame.maxEnvelope(), publication.maxMessageLength() - ClientFrame.APPEND_OVERHEAD);
            c.lastHeardNanos = System.nanoTime();
            c.leaderAddress = frame.port() == 0 ? null : InetSocketAddress.createUnresolved(frame.host(), frame.port());
            byte[] descriptorBytes = frame.descriptor();
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
        ClientRefusal r = frame.refusal();
        String message = frame.message();
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

    private boolean offerHandshake(ExclusivePublication publication, int length, long deadline) {
        while (true) {
            long result = publication.offer(hs, 0, length);
            if (result > 0) {
                return true;
            }
            if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED || System.nanoTime() - deadline > 0) {
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
            if (System.nanoTime() - deadline > 0) {
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

    /** Waits for the next authentic session frame of {@code c}; false on timeout. */
    private boolean awaitFrame(Connection c, long deadline) {
        while (true) {
            awaited = c.id;
            rxLength = 0;
            while (rxLength == 0) {
                if (System.nanoTime() - deadline > 0) {
                    return false;
                }
                if (work() == 0) {
                    idle.idle();
                } else {
                    idle.reset();
                }
            }
            if (!decode()) {
                continue;
            }
            boolean authentic = c.mac.verify(frame)
                    || frame.type() == ClientFrameType.REFUSED && frame.refusal() == ClientRefusal.UNAUTHENTICATED && handshakeMac.verify(frame);
            if (!authentic || frame.sequence() <= c.rxSequence) {
                continue; // forged or replayed: ignored
            }
            c.rxSequence = frame.sequence();
            c.lastHeardNanos = System.nanoTime();
            return true;
        }
    }

    private boolean decode() {
        try {
            frame.wrap(rx, 0, rxLength);
            return true;
        } catch (MalformedClientFrameException e) {
            return false;
        }
    }

    private ControlledFragmentHandler.Action onFragment(DirectBuffer buffer, int offset, int length, Header header) {
        if (length < ClientFrame.HEADER_LENGTH + ClientFrame.MAC_LENGTH) {
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        long id = buffer.getLong(offset + ClientFrame.CONNECTION_OFFSET, ClientFrame.ORDER);
        if (tailConnectionId != 0 && id == tailConnectionId && tailer != null) {
            tailer.onFragment(buffer, offset, length);
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        if (id != awaited) {
            return ControlledFragmentHandler.Action.CONTINUE; // not for the connection waited on (a late frame of an old one): dropped
        }
        if (rxLength != 0) {
            return ControlledFragmentHandler.Action.ABORT; // the frame before it is still being looked at: stays for the next poll
        }
        rx.putBytes(0, buffer, offset, length);
        rxLength = length;
        return ControlledFragmentHandler.Action.CONTINUE;
    }

    /** One turn of the embedded driver and client, and the reply subscription. */
    private int work() {
        int n = driverInvoker.invoke();
        n += conductorInvoker.invoke();
        n += replies.controlledPoll(assembler, 16);
        return n;
    }

    void sleepUntil(long until) {
        while (System.nanoTime() - until < 0) {
            if (work() == 0) {
                idle.idle();
            }
        }
        idle.reset();
    }

    private void disconnect() {
        if (connection != null) {
            connection.publication.close();
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
        closed = true;
        if (tailer != null) {
            tailer.close();
        }
        disconnect();
        aeron.close();
        driver.close();
        IoUtil.delete(aeronDirectory.toFile(), true);
        credential.close();
    }

    // ------------------------------------------------------------------------------------------------ setup helpers

    private static int boundPort(Subscription subscription) {
        for (int i = 0; i < 1000; i++) {
            List<String> bound = subscription.localSocketAddresses();
            if (!bound.isEmpty()) {
                String a = bound.get(0);
                return Integer.parseInt(a.substring(a.lastIndexOf(':') + 1));
            }
            Thread.onSpinWait();
        }
        throw new IllegalStateException("the reply subscription did not bind");
    }

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
        private Path keyDirectory;
        private KeyRing keyRing;
        private CipherMode cipherMode = CipherMode.AES_128_CTR_POLY1305;
        private Duration ackTimeout = Duration.ofSeconds(5);
        private Duration backPressureTimeout = Duration.ofSeconds(1);
        private Duration connectTimeout = Duration.ofSeconds(10);
        private String replyHost;
        private int replyPort;
        private Path aeronDirectory;

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
            if (replyPort < 0 || replyPort > 65535) {
                throw bad(label, "replyEndpoint: port " + replyPort + " is not in 0..65535");
            }
            ClientCredential credential;
            try {
                credential = ClientCredential.load(credentialFile);
            } catch (ClientCredential.ClientCredentialException e) {
                throw bad(label, "clientCredential: " + e.getMessage());
            }
            KeyRing ring = keyRing;
            if (ring == null) {
                try {
                    ring = KeyRingSource.read(keyDirectory);
                } catch (KeyFileException e) {
                    credential.close();
                    throw bad(label, "keyDirectory: " + e.getMessage());
                }
            }
            RemoteQueue q = new RemoteQueue(this, ring, credential);
            try {
                q.connectToLeader(System.nanoTime() + connectTimeout.toNanos());
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
