package io.queueenterprise.remote;

import io.aeron.Publication;
import io.queueenterprise.protocol.client.AppendAckEncoder;
import io.queueenterprise.protocol.client.AppendDecoder;
import io.queueenterprise.protocol.client.ChallengeEncoder;
import io.queueenterprise.protocol.client.ClientAckMode;
import io.queueenterprise.protocol.client.ClientCredential;
import io.queueenterprise.protocol.client.ClientFrameHeaderDecoder;
import io.queueenterprise.protocol.client.ClientFrameMac;
import io.queueenterprise.protocol.client.ClientProtocol;
import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.protocol.client.ConnectDecoder;
import io.queueenterprise.protocol.client.ConnectedEncoder;
import io.queueenterprise.protocol.client.MalformedClientFrameException;
import io.queueenterprise.protocol.client.ProofDecoder;
import io.queueenterprise.protocol.client.RefusedEncoder;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;

import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * A {@link ClientTransport} that plays the cluster's nodes in the test's thread, on a clock it controls: every poll is
 * {@link #TICK_NANOS} of time, so timeouts pass without sleeping. The nodes share one queue (as replicas holding the
 * same excerpts would) and its writer-session table: the same writer epoch and sequence again is answered with the
 * original index, as a real leader does. Each node can lose frames, answer nothing, refuse, or back-pressure.
 * Steady-state appends on a warm connection allocate nothing here (recording off), so the client's path can be
 * measured.
 */
final class FakeNodes implements ClientTransport {
    static final long TICK_NANOS = 1_000_000L;
    /** How far each poll moves the clock ({@link #TICK_NANOS} unless a test needs finer time, e.g. under a linger). */
    long tickNanos = TICK_NANOS;
    static final String REPLY_HOST = "127.0.0.1";
    static final int REPLY_PORT = 40999;
    private static final int SLOTS = 8192;
    private static final int RECENT = 8192;

    /** One APPEND as a node received it. */
    record Arrival(String node, long epoch, int writerSequence, long frameSequence, long atNanos, boolean lost) {
    }

    final class Node {
        final String host;
        final int port;
        boolean leads;
        long term = 1;
        String leaderHost = "";
        int leaderPort;
        /** The next this many APPENDs are lost on the way (never arrive). */
        int appendsToLose;
        /** When the last connection to this node completed its handshake. */
        long connectedAtNanos;
        /** The APPEND of this writer sequence is lost once (-1: none). */
        int loseSequenceOnce = -1;
        /** APPENDs of this writer sequence and above never arrive (-1: none). */
        int loseFromSequence = -1;
        /** The answers to the next this many APPENDs are lost (the APPEND itself is acted on). */
        int answersToLose;
        /** Frames arrive and are acted on (an APPEND is appended), but no answer ever leaves: a node gone silent. */
        boolean answersLost;
        /** APPENDs are refused with this reason, naming {@link #leaderHost}:{@link #leaderPort}. */
        ClientRefusal refuseAppends;
        /** Every offer of an APPEND is back-pressured. */
        boolean backPressured;
        private final Long2ObjectHashMap<Session> sessions = new Long2ObjectHashMap<>();

        Node(String host, int port) {
            this.host = host;
            this.port = port;
        }

        String address() {
            return host + ":" + port;
        }
    }

    private static final class Session {
        final long id;
        /** Acks queued this tick: a run of consecutive sequences of one epoch, sent coalesced at the next poll. */
        long ackEpoch;
        int ackHighest;
        int ackCount;
        final long[] ackIndexes = new long[ClientProtocol.MAX_ACKS_PER_FRAME];
        boolean acking;

        Session(long id) {
            this.id = id;
        }

        final byte[] clientNonce = new byte[ClientProtocol.NONCE_LENGTH];
        final byte[] clientEphemeral = new byte[ClientProtocol.EPHEMERAL_LENGTH];
        byte[] nodeEphemeral;
        byte[] shared;
        String clientName;
        final byte[] nodeNonce = new byte[ClientProtocol.NONCE_LENGTH];
        ClientFrameMac mac;
        long txSequence;
        /** The epoch this connection's CLAIM proved, or 0 (a random epoch always has its top bit set). */
        long claimedEpoch;
        int claims;
    }

    private final Map<String, Node> nodes = new LinkedHashMap<>();
    private final ClientCredential credential;
    private final ClientFrameMac handshakeMac;
    private final String queueName;
    private final byte[] descriptor;
    private final SecureRandom random = new SecureRandom();
    private final ClientFrameHeaderDecoder header = new ClientFrameHeaderDecoder();
    private final ConnectDecoder connect = new ConnectDecoder();
    private final ProofDecoder proof = new ProofDecoder();
    private final AppendDecoder append = new AppendDecoder();
    private final io.queueenterprise.protocol.client.AppendBatchDecoder batch = new io.queueenterprise.protocol.client.AppendBatchDecoder();
    /** APPEND_BATCH frames received (each entry also counts as an arrival). */
    int batches;
    private final io.queueenterprise.protocol.client.ClaimDecoder claim = new io.queueenterprise.protocol.client.ClaimDecoder();
    private final ChallengeEncoder challenge = new ChallengeEncoder();
    private final ConnectedEncoder connected = new ConnectedEncoder();
    private final AppendAckEncoder ack = new AppendAckEncoder();
    private final RefusedEncoder refusal = new RefusedEncoder();
    private final org.agrona.ExpandableArrayBuffer[] slots = new org.agrona.ExpandableArrayBuffer[SLOTS];
    private final List<Session> acking = new ArrayList<>();
    private final List<Node> ackingNodes = new ArrayList<>();
    private final long[] recentEpochs = new long[RECENT];
    private final int[] recentSequences = new int[RECENT];
    private final long[] recentIndexes = new long[RECENT];
    private int recentNext;
    /** Acks wait (as for a quorum) until this is cleared; then the queued runs go out. */
    boolean holdAcks;
    /** How many more appends the nodes acknowledge (the rest wait until it is raised): a node that acks part of a window. */
    long acksLeft = Long.MAX_VALUE;
    /** Acknowledgement frames sent (each may acknowledge several appends). */
    long ackFrames;
    private final int[] slotLengths = new int[SLOTS];
    private int head;
    private int queued;

    /** The queue all replicas hold: writer epoch → last sequence and its index. */
    private final Long2LongHashMap lastSequence = new Long2LongHashMap(-1);
    private final Long2LongHashMap lastIndex = new Long2LongHashMap(-1);
    long nextIndex;
    long appended;
    boolean recording = true;
    final List<Arrival> arrivals = new ArrayList<>();
    long nanos = 1_000_000_000L;
    final LongSupplier clock = () -> nanos;

    FakeNodes(ClientCredential credential, String queueName, byte[] descriptor) {
        this.credential = credential;
        this.handshakeMac = credential.handshakeMac();
        this.queueName = queueName;
        this.descriptor = descriptor;
        for (int i = 0; i < SLOTS; i++) {
            slots[i] = new org.agrona.ExpandableArrayBuffer(i < 64 ? 128 * 1024 : 512);
        }
    }

    Node node(String host, int port) {
        Node n = new Node(host, port);
        nodes.put(n.address(), n);
        return n;
    }

    long now() {
        return nanos;
    }

    @Override
    public Link connect(InetSocketAddress address) {
        Node node = nodes.get(address.getHostString() + ":" + address.getPort());
        return new Link() {
            boolean closed;

            @Override
            public boolean isConnected() {
                return node != null && !closed;
            }

            @Override
            public long offer(DirectBuffer buffer, int offset, int length) {
                if (closed) {
                    return Publication.CLOSED;
                }
                if (node == null) {
                    return Publication.NOT_CONNECTED;
                }
                return receive(node, buffer, offset, length);
            }

            @Override
            public int maxMessageLength() {
                return RemoteQueue.TERM_LENGTH / 8;
            }

            @Override
            public int maxPayloadLength() {
                return 64 * 1024 - 32; // Aeron's largest MTU, as to a node on loopback
            }

            @Override
            public void close() {
                closed = true;
            }
        };
    }

    @Override
    public int poll(FrameHandler handler, int limit) {
        nanos += tickNanos;
        flushAcks();
        int delivered = 0;
        while (queued > 0 && delivered < limit) {
            if (!handler.onFrame(slots[head], 0, slotLengths[head])) {
                break;
            }
            head = (head + 1) % SLOTS;
            queued--;
            delivered++;
        }
        return delivered;
    }

    @Override
    public String replyHost() {
        return REPLY_HOST;
    }

    @Override
    public int replyPort() {
        return REPLY_PORT;
    }

    @Override
    public void close() {
    }

    // ------------------------------------------------------------------------------------------------ the node's side

    private long receive(Node node, DirectBuffer buffer, int offset, int length) {
        try {
            header.wrap(buffer, offset, length);
            switch (header.type()) {
                case CONNECT -> onConnect(node, buffer, offset, length);
                case PROOF -> onProof(node, buffer, offset, length);
                case CLAIM -> onClaim(node, buffer, offset, length);
                case APPEND -> {
                    if (node.backPressured) {
                        return Publication.BACK_PRESSURED;
                    }
                    append.wrap(buffer, offset, length);
                    onAppend(node, append, append.epoch(), append.writerSequence());
                }
                case APPEND_BATCH -> {
                    if (node.backPressured) {
                        return Publication.BACK_PRESSURED;
                    }
                    // as a node: each entry exactly as an APPEND of its own (the loss model too: per append)
                    batch.wrap(buffer, offset, length);
                    batches++;
                    for (int k = 0; k < batch.count(); k++) {
                        onAppend(node, batch, batch.epoch(), batch.firstSequence() + k);
                    }
                }
                default -> {
                }
            }
        } catch (MalformedClientFrameException e) {
            throw new AssertionError("the client sent a malformed frame", e);
        }
        return 1;
    }

    private void onConnect(Node node, DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        connect.wrap(buffer, offset, length);
        if (!handshakeMac.verify(connect) || !connect.queueName().equals(queueName)) {
            throw new AssertionError("CONNECT does not verify or names another queue");
        }
        Session s = new Session(connect.connection());
        connect.clientNonce(s.clientNonce);
        connect.clientEphemeral(s.clientEphemeral);
        s.clientName = connect.clientName();
        io.queueenterprise.crypto.EphemeralKey ephemeral = io.queueenterprise.crypto.EphemeralKey.generate(new java.security.SecureRandom());
        s.nodeEphemeral = ephemeral.publicKey();
        s.shared = ephemeral.agree(s.clientEphemeral);
        random.nextBytes(s.nodeNonce);
        long id = connect.connection();
        node.sessions.put(id, s);
        byte[] nodeProof = credential.proof("node", id, queueName, s.clientName, s.clientNonce, s.nodeNonce, s.clientEphemeral,
                s.nodeEphemeral);
        org.agrona.MutableDirectBuffer out = slot(node);
        if (out != null) {
            int n = challenge.wrap(out, 0).encode(id, ++s.txSequence, s.clientNonce, s.nodeNonce, nodeProof, s.nodeEphemeral);
            handshakeMac.sign(out, 0, n);
            send(n);
        }
    }

    private void onProof(Node node, DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        proof.wrap(buffer, offset, length);
        long id = proof.connection();
        Session s = node.sessions.get(id);
        byte[] clientProof = new byte[ClientProtocol.PROOF_LENGTH];
        proof.clientProof(clientProof);
        if (s == null || !handshakeMac.verify(proof)
                || !ClientCredential.proofEquals(clientProof, credential.proof("client", id, queueName, s.clientName, s.clientNonce,
                s.nodeNonce, s.clientEphemeral, s.nodeEphemeral))) {
            throw new AssertionError("PROOF does not verify");
        }
        s.mac = credential.sessionMac(id, s.clientNonce, s.nodeNonce, s.shared, s.clientEphemeral, s.nodeEphemeral, s.clientName);
        node.connectedAtNanos = nanos;
        org.agrona.MutableDirectBuffer out = slot(node);
        if (out != null) {
            int n = connected.wrap(out, 0).encode(id, ++s.txSequence, node.term, node.leads, ClientAckMode.QUORUM, 0,
                    256 * 1024, node.leaderHost, node.leaderPort, descriptor);
            s.mac.sign(out, 0, n);
            send(n);
        }
    }

    /** As a node does: the claim must verify for the connection (the APPEND check below is the test's oracle). */
    private void onClaim(Node node, DirectBuffer buffer, int offset, int length) throws MalformedClientFrameException {
        claim.wrap(buffer, offset, length);
        Session s = node.sessions.get(claim.connection());
        byte[] publicKey = new byte[io.queueenterprise.protocol.client.WriterClaim.PUBLIC_KEY_LENGTH];
        byte[] signature = new byte[io.queueenterprise.protocol.client.WriterClaim.SIGNATURE_LENGTH];
        claim.publicKey(publicKey);
        claim.signature(signature);
        if (s == null || s.mac == null || !s.mac.verify(claim) || !io.queueenterprise.protocol.client.WriterClaim.verify(publicKey,
                signature, claim.epoch(), claim.connection(), s.clientNonce, s.nodeNonce)) {
            throw new AssertionError("CLAIM does not verify");
        }
        if (++s.claims > io.queueenterprise.protocol.client.WriterClaim.MAX_PER_CONNECTION) {
            return; // as a node: dropped beyond the limit
        }
        s.claimedEpoch = claim.epoch();
    }

    /** One append (an APPEND, or an entry of an APPEND_BATCH {@code append}) of writer {@code epoch}'s {@code sequence}. */
    private void onAppend(Node node, io.queueenterprise.protocol.client.ClientFrameDecoder append, long epoch, int sequence) {
        boolean lostOnce = sequence == node.loseSequenceOnce;
        boolean lostFrom = node.loseFromSequence >= 0 && sequence >= node.loseFromSequence;
        boolean lost = node.appendsToLose > 0 || lostOnce || lostFrom;
        if (recording) {
            arrivals.add(new Arrival(node.address(), epoch, sequence, append.sequence(), nanos, lost));
        }
        if (lost) {
            if (lostOnce) {
                node.loseSequenceOnce = -1;
            } else if (!lostFrom) {
                node.appendsToLose--;
            }
            return;
        }
        Session s = node.sessions.get(append.connection());
        if (s == null || s.mac == null || !s.mac.verify(append)) {
            throw new AssertionError("APPEND on an unknown session or with a bad MAC");
        }
        if (s.claimedEpoch != epoch) {
            throw new AssertionError("APPEND under epoch " + Long.toHexString(epoch) + " on a connection that claimed "
                    + Long.toHexString(s.claimedEpoch));
        }
        org.agrona.MutableDirectBuffer out = slot(node);
        if (out != null && node.answersToLose > 0) {
            node.answersToLose--;
            out = null;
        }
        if (node.refuseAppends != null) {
            if (out != null) {
                int n = refusal.wrap(out, 0).encode(append.connection(), ++s.txSequence, node.refuseAppends, epoch, sequence,
                        node.term, node.leaderHost, node.leaderPort, "refused by the fake node");
                s.mac.sign(out, 0, n);
                send(n);
            }
            return;
        }
        long index;
        long last = lastSequence.get(epoch);
        if (sequence <= last) {
            index = recentIndex(epoch, sequence); // a resend: the original index, nothing appended
        } else if (sequence != last + 1) {
            if (out != null) {
                int n = refusal.wrap(out, 0).encode(append.connection(), ++s.txSequence, ClientRefusal.SEQUENCE_GAP, epoch,
                        (int) (last + 1), node.term, "", 0, "expected writer sequence " + (last + 1));
                s.mac.sign(out, 0, n);
                send(n);
            }
            return;
        } else {
            index = nextIndex++;
            appended++;
            lastSequence.put(epoch, sequence);
            lastIndex.put(epoch, index);
            recentEpochs[recentNext] = epoch;
            recentSequences[recentNext] = sequence;
            recentIndexes[recentNext] = index;
            recentNext = (recentNext + 1) % RECENT;
        }
        if (out != null) {
            queueAck(node, s, epoch, sequence, index);
        }
    }

    private long recentIndex(long epoch, int sequence) {
        for (int i = 0; i < RECENT; i++) {
            if (recentEpochs[i] == epoch && recentSequences[i] == sequence) {
                return recentIndexes[i];
            }
        }
        throw new AssertionError("the client resent sequence " + sequence + " that the fake node no longer remembers");
    }

    /** As the node's gateway: acks queued per connection, sent as runs at the end of the tick (the next poll). */
    private void queueAck(Node node, Session s, long epoch, int sequence, long index) {
        if (s.ackCount > 0 && (s.ackEpoch != epoch || s.ackHighest + 1 != sequence || s.ackCount == s.ackIndexes.length)) {
            sendAcks(node, s);
        }
        s.ackEpoch = epoch;
        s.ackHighest = sequence;
        s.ackIndexes[s.ackCount++] = index;
        if (!s.acking) {
            s.acking = true;
            acking.add(s);
            ackingNodes.add(node);
        }
    }

    private void flushAcks() {
        if (holdAcks) {
            return;
        }
        for (int i = acking.size() - 1; i >= 0; i--) {
            Session s = acking.get(i);
            if (s.ackCount > 0 && acksLeft > 0) {
                sendAcks(ackingNodes.get(i), s);
            }
            if (s.ackCount == 0) { // else: acksLeft held some back
                s.acking = false;
                acking.remove(i);
                ackingNodes.remove(i);
            }
        }
    }

    private void sendAcks(Node node, Session s) {
        org.agrona.MutableDirectBuffer out = slot(node);
        if (out != null) {
            int k = (int) Math.min(s.ackCount, acksLeft);
            if (acksLeft != Long.MAX_VALUE) {
                acksLeft -= k;
            }
            ack.wrap(out, 0).begin(s.id, ++s.txSequence, s.ackEpoch, node.term);
            for (int i = 0; i < k; i++) {
                ack.index(s.ackIndexes[i]);
            }
            int n = ack.end(s.ackHighest - (s.ackCount - k));
            s.mac.sign(out, 0, n);
            send(n);
            ackFrames++;
            System.arraycopy(s.ackIndexes, k, s.ackIndexes, 0, s.ackCount - k);
            s.ackCount -= k;
            return;
        }
        s.ackCount = 0;
    }

    /** The next free reply slot, or null when the node's answers are lost. */
    private org.agrona.ExpandableArrayBuffer slot(Node node) {
        if (node.answersLost) {
            return null;
        }
        if (queued == SLOTS) {
            throw new AssertionError("the client does not take its replies");
        }
        return slots[(head + queued) % SLOTS];
    }

    private void send(int length) {
        slotLengths[(head + queued) % SLOTS] = length;
        queued++;
    }
}
