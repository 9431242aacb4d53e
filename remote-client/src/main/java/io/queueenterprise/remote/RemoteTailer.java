package io.queueenterprise.remote;

import io.aeron.Publication;
import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.EnvelopeException;
import io.queueenterprise.crypto.ExcerptOpener;
import io.queueenterprise.crypto.QueueIdentity;
import io.queueenterprise.queue.BufferTooSmallException;
import io.queueenterprise.queue.ExcerptDecryptionException;
import io.queueenterprise.queue.QueueStateException;
import io.queueenterprise.queue.QueueTailer;
import io.queueenterprise.protocol.client.ClientFrameDecoder;
import io.queueenterprise.protocol.client.ClientFrameDecoders;
import io.queueenterprise.protocol.client.ClientRefusal;
import io.queueenterprise.protocol.client.MalformedClientFrameException;
import io.queueenterprise.protocol.client.RefusedDecoder;
import io.queueenterprise.protocol.client.TailCreditEncoder;
import io.queueenterprise.protocol.client.TailDataDecoder;
import io.queueenterprise.protocol.client.TailEndDecoder;
import io.queueenterprise.protocol.client.TailFrom;
import io.queueenterprise.protocol.client.TailMode;
import io.queueenterprise.protocol.client.TailOpenEncoder;
import io.queueenterprise.protocol.client.TailStatusDecoder;
import io.queueenterprise.protocol.client.TailStatusKind;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.wire.ReadMarshallable;
import net.openhft.chronicle.wire.Wire;
import net.openhft.chronicle.wire.WireType;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link QueueTailer} over the network: any replica streams the queue's envelopes as stored, this tailer opens
 * them with the client's own keys (nodes hold none), at the indexes a local tailer reads. Excerpts arrive ahead of
 * the reads into a window of {@link #WINDOW} envelopes; the node sends only as many as the window has room for
 * (credit), so a slow reader holds the node back instead of being flooded.
 *
 * <p>When its replica stops answering (no frame for {@link #SILENCE_NANOS}; the node says it is alive every
 * 250 ms) or ends the tail for a reason another node may not have, it connects to another replica and resumes
 * right after the last excerpt it holds: no gap, no duplicate (it also drops any index not above the last one).
 * A read may then block while it reconnects, up to the queue's connect timeout.
 *
 * <p>In {@link TailMode#REPLICATED} mode it sees only excerpts a majority of replicas holds, so an excerpt it
 * returned is never one that a failover quarantines. In {@link TailMode#ALL} mode it sees what its replica holds,
 * as a local tailer on that replica would, which after a leader's failure may include an excerpt the new leader
 * never had.
 *
 * <p>Not thread-safe; driven by the calling thread, like its {@link RemoteQueue}.
 */
public final class RemoteTailer implements QueueTailer {
    /** Envelopes received ahead of the reads (and the credit the node starts with). */
    static final int WINDOW = 256;
    /** No frame from the replica for this long: it is taken for dead and another one serves the tail. */
    static final long SILENCE_NANOS = 1_500_000_000L;
    /** How often the tailer tells the node it is still there when it grants nothing. */
    private static final long KEEPALIVE_NANOS = 1_000_000_000L;
    private static final long OPEN_STEP_NANOS = 1_000_000_000L;
    private static final long MAX_BACKOFF_NANOS = 500_000_000L;

    private final RemoteQueue queue;
    private final String queueName;
    private final TailMode mode;
    private final ExcerptOpener opener;
    private final List<InetSocketAddress> order = new ArrayList<>();
    private final ClientFrameDecoders in = new ClientFrameDecoders();
    private final TailDataDecoder data = in.tailData;
    private final TailStatusDecoder status = in.tailStatus;
    private final TailEndDecoder end = in.tailEnd;
    private final RefusedDecoder refused = in.refused;
    private final TailOpenEncoder openEncoder = new TailOpenEncoder();
    private final TailCreditEncoder creditEncoder = new TailCreditEncoder();
    private final ExpandableArrayBuffer tx = new ExpandableArrayBuffer(256);
    /** The window: envelopes received whole and not yet read, oldest at {@link #head}. */
    private final byte[][] slots = new byte[WINDOW][];
    private final int[] slotLengths = new int[WINDOW];
    private final long[] slotIndexes = new long[WINDOW];
    private int head;
    private int count;
    /** The excerpt being assembled from pieces. */
    private byte[] assembling = new byte[4096];
    private long assemblingIndex = -1;
    private int assembled;
    private byte[] plain = new byte[1024];
    private Bytes<byte[]> documentBytes;
    private Wire documentWire;

    private RemoteQueue.Connection connection;
    private int nodeCursor;
    private long tailId;
    /** Where the current position started (what a resume asks when nothing was received since). */
    private TailFrom openFrom = TailFrom.START;
    private long openIndex = -1;
    /** The last index received into the window (or read): a resume continues after it. -1: none since the open. */
    private long lastReceived = -1;
    private long lastReadIndex = -1;
    private boolean opened;
    private ClientRefusal ended;
    private String endMessage;
    private long endFirst;
    private long endLast;
    private int grantPending;
    private long lastGrantNanos;
    private boolean positioned;
    private boolean closed;
    private long resumes;

    RemoteTailer(RemoteQueue queue, TailMode mode, InetSocketAddress preferred) {
        this.queue = queue;
        this.queueName = queue.name();
        this.mode = mode;
        this.opener = new ExcerptOpener(new QueueIdentity(queue.descriptor().name(), queue.descriptor().incarnationId()),
                queue.keyRing(), queue.cipherMode(), CryptoEngine.JCE);
        if (preferred != null) {
            order.add(preferred);
        }
        for (InetSocketAddress a : queue.addresses()) {
            if (!a.equals(preferred)) {
                order.add(a);
            }
        }
    }

    /** Replicated reads or all appended. */
    public TailMode mode() {
        return mode;
    }

    /** The replica serving this tailer now, or null. */
    public InetSocketAddress servingNode() {
        return connection == null ? null : connection.node;
    }

    /** How many times this tailer moved to another replica (or reconnected) and resumed. */
    public long resumes() {
        return resumes;
    }

    // ------------------------------------------------------------------------------------------------ reads

    @Override
    public int read(byte[] dst, int offset, int capacity) {
        java.util.Objects.checkFromIndexSize(offset, capacity, dst.length);
        int length = openHead();
        if (length < 0) {
            return -1;
        }
        long index = slotIndexes[head];
        if (length > capacity) {
            throw new BufferTooSmallException(queueName, index, length, capacity);
        }
        opener.decryptTo(dst, offset);
        taken(index);
        return length;
    }

    @Override
    public int read(ByteBuffer dst) {
        int length = openHead();
        if (length < 0) {
            return -1;
        }
        long index = slotIndexes[head];
        if (length > dst.remaining()) {
            throw new BufferTooSmallException(queueName, index, length, dst.remaining());
        }
        dst.put(decrypted(length), 0, length);
        taken(index);
        return length;
    }

    @Override
    public boolean read(Bytes<?> dst) {
        int length = openHead();
        if (length < 0) {
            return false;
        }
        long index = slotIndexes[head];
        dst.write(decrypted(length), 0, length);
        taken(index);
        return true;
    }

    @Override
    public boolean readDocument(ReadMarshallable reader) {
        int length = openHead();
        if (length < 0) {
            return false;
        }
        long index = slotIndexes[head];
        if (documentBytes == null) {
            documentBytes = Bytes.allocateElasticOnHeap(Math.max(256, length));
            documentWire = WireType.BINARY_LIGHT.apply(documentBytes);
        }
        documentBytes.clear();
        documentBytes.write(decrypted(length), 0, length);
        reader.readMarshallable(documentWire); // a reader that throws leaves the excerpt unread, as locally
        taken(index);
        return true;
    }

    @Override
    public boolean skip() {
        checkOpen();
        if (count == 0) {
            receive();
        }
        if (count == 0) {
            return false;
        }
        taken(slotIndexes[head]);
        return true;
    }

    /** Damage is a property of one replica's files: a remote tailer moves to another replica by itself instead. */
    @Override
    public long skipDamaged() {
        throw new QueueStateException(queueName, "skipDamaged() is a recovery path for a local copy; a remote tailer reads "
                + "from another replica when its replica cannot read its copy", null);
    }

    @Override
    public long lastReadIndex() {
        return lastReadIndex;
    }

    /** Verifies the oldest envelope in the window (receiving first when it is empty); its plaintext length, or -1. */
    private int openHead() {
        checkOpen();
        if (count == 0) {
            receive();
        }
        if (count == 0) {
            return -1;
        }
        long index = slotIndexes[head];
        try {
            return opener.verify(index, slots[head], 0, slotLengths[head]);
        } catch (EnvelopeException e) {
            throw new ExcerptDecryptionException(queueName, index, e); // stays at the head: never returned, never skipped silently
        }
    }

    private byte[] decrypted(int length) {
        if (plain.length < length) {
            plain = new byte[Math.max(length, plain.length * 2)];
        }
        opener.decryptTo(plain, 0);
        return plain;
    }

    /** The head excerpt was returned (or skipped): frees its slot and gives the node credit for one more. */
    private void taken(long index) {
        lastReadIndex = index;
        head = (head + 1) % WINDOW;
        count--;
        grantPending++;
        if (grantPending >= WINDOW / 4) {
            grant(System.nanoTime());
        }
    }

    // ------------------------------------------------------------------------------------------------ positioning

    @Override
    public boolean moveToIndex(long index) {
        checkOpen();
        return position(TailFrom.AT, index, true);
    }

    @Override
    public QueueTailer toStart() {
        checkOpen();
        position(TailFrom.START, -1, false);
        return this;
    }

    /** After this, reads return what is appended from now on (the tail continues after the replica's last index). */
    @Override
    public QueueTailer toEnd() {
        checkOpen();
        position(TailFrom.END, -1, false);
        return this;
    }

    /**
     * Opens a tail at a new position (forgetting what the window held); true once a replica serves it, false when
     * {@code indexMayBeMissing} and a replica answered that it does not hold the index.
     */
    private boolean position(TailFrom from, long index, boolean indexMayBeMissing) {
        opener.forgetWriterOrder();
        head = 0;
        count = 0;
        lastReceived = -1;
        assemblingIndex = -1;
        openFrom = from;
        openIndex = index;
        positioned = true;
        ClientRefusal answer = open(from, index);
        if (answer == null) {
            return true;
        }
        if (indexMayBeMissing && (answer == ClientRefusal.INDEX_NOT_FOUND || answer == ClientRefusal.BEHIND_RETENTION)) {
            positioned = false; // as a local tailer that failed to move: the next read starts from the start
            openFrom = TailFrom.START;
            return false;
        }
        throw refused(answer);
    }

    /**
     * Opens the tail from {@code from}/{@code index} on some replica, trying each in turn with bounded backoff until
     * the connect timeout; returns null when open, or the refusal that ends the attempt (INDEX_NOT_FOUND and
     * BEHIND_RETENTION from a replica that holds more than the index; any refusal that cannot be retried).
     */
    private ClientRefusal open(TailFrom from, long index) {
        long deadline = System.nanoTime() + queue.connectTimeoutNanos();
        long backoff = 10_000_000L;
        StringBuilder answers = new StringBuilder();
        while (true) {
            for (int attempt = 0; attempt < order.size(); attempt++) {
                if (System.nanoTime() - deadline > 0) {
                    break;
                }
                if (connection == null && !connect(deadline, answers)) {
                    continue;
                }
                ClientRefusal r = openOn(from, index, Math.min(deadline, System.nanoTime() + OPEN_STEP_NANOS));
                if (r == null && opened) {
                    return null;
                }
                InetSocketAddress node = connection.node;
                if (r == null) {
                    answers.append(node).append(": no answer to TAIL_OPEN; ");
                } else {
                    answers.append(node).append(": ").append(r).append(' ').append(endMessage).append("; ");
                    // a replica behind the index a resume continues after: another one (or this one later) holds it
                    boolean lagging = from == TailFrom.AFTER && r == ClientRefusal.INDEX_NOT_FOUND && endLast < index;
                    if (!r.retryable() && !lagging) {
                        return r; // this replica holds past the index, or it is behind retention: another one would say the same
                    }
                }
                disconnect(); // try the next replica
                nodeCursor++;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new RemoteQueueException(queueName, RemoteQueueException.Reason.NO_REPLICA, null, false,
                        "no replica of " + order + " served the tail in time; answers: " + answers, null);
            }
            queue.sleepUntil(Math.min(deadline, System.nanoTime() + backoff));
            backoff = Math.min(MAX_BACKOFF_NANOS, backoff * 2);
        }
    }

    /** Handshake with the replica at the cursor; false (reason in {@code answers}) when it cannot be used now. */
    private boolean connect(long deadline, StringBuilder answers) {
        InetSocketAddress node = order.get(Math.floorMod(nodeCursor, order.size()));
        RemoteQueue.Connection c = queue.handshakeForTail(node, Math.min(deadline, System.nanoTime() + OPEN_STEP_NANOS), answers);
        if (c == null) {
            nodeCursor++;
            return false;
        }
        connection = c;
        queue.tailConnection(this, c.id);
        return true;
    }

    /** Sends TAIL_OPEN and waits for its answer until {@code until}: null with {@link #opened} set, a refusal, or null. */
    private ClientRefusal openOn(TailFrom from, long index, long until) {
        RemoteQueue.Connection c = connection;
        tailId = queue.random().nextLong();
        opened = false;
        ended = null;
        assemblingIndex = -1;
        int credit = WINDOW - count;
        grantPending = 0;
        int length = openEncoder.wrap(tx, 0).encode(c.id, ++c.txSequence, c.queue, from, mode, credit, tailId, index);
        c.mac.sign(tx, 0, length);
        if (!offer(length, until)) {
            return null;
        }
        long now = System.nanoTime();
        lastGrantNanos = now;
        c.lastHeardNanos = now;
        while (!opened && ended == null && System.nanoTime() - until < 0) {
            queue.pollOrIdle();
        }
        return ended;
    }

    private boolean offer(int length, long until) {
        RemoteQueue.Connection c = connection;
        while (true) {
            long result = c.link.offer(tx, 0, length);
            if (result > 0) {
                return true;
            }
            if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED || System.nanoTime() - until > 0) {
                return false;
            }
            queue.pollOnce();
        }
    }

    // ------------------------------------------------------------------------------------------------ receive

    /** Takes what has arrived; moves to another replica when this one went silent or ended the tail. Non-blocking otherwise. */
    private void receive() {
        if (!positioned || connection == null && ended == null) {
            if (!positioned) {
                positioned = true; // a new tailer, or one whose moveToIndex failed: from the start, as a local tailer
                openFrom = TailFrom.START;
                openIndex = -1;
            }
            resume();
            return;
        }
        for (int i = 0; i < 8 && count == 0; i++) {
            if (queue.pollOnce() == 0) {
                break;
            }
        }
        long now = System.nanoTime();
        if (ended != null) {
            if (!ended.retryable() && ended != ClientRefusal.INDEX_NOT_FOUND) {
                ClientRefusal r = ended;
                ended = null;
                throw refused(r);
            }
            resume();
            return;
        }
        if (now - connection.lastHeardNanos > SILENCE_NANOS) {
            resume();
            return;
        }
        if (now - lastGrantNanos > KEEPALIVE_NANOS) {
            grant(now);
        }
    }

    /** Reopens on another replica right after the last excerpt received (or at the original position). */
    private void resume() {
        if (connection != null) {
            disconnect();
            nodeCursor++;
            resumes++;
        }
        ClientRefusal r = lastReceived >= 0 ? open(TailFrom.AFTER, lastReceived) : open(openFrom, openIndex);
        if (r != null) {
            throw refused(r);
        }
    }

    /** A frame on this tailer's connection (called from the queue's poll): verified, then taken. */
    void onFragment(DirectBuffer buffer, int offset, int length) {
        RemoteQueue.Connection c = connection;
        if (c == null) {
            return;
        }
        ClientFrameDecoder frame;
        try {
            frame = in.wrap(buffer, offset, length);
        } catch (MalformedClientFrameException e) {
            return;
        }
        if (frame != data && frame != status && frame != end && frame != refused) {
            return; // not a frame a node sends a tailer
        }
        if (!c.mac.verify(frame) || frame.sequence() <= c.rxSequence) {
            return; // forged or replayed: ignored
        }
        c.rxSequence = frame.sequence();
        c.lastHeardNanos = System.nanoTime();
        if (frame == data) {
            if (data.tail() == tailId && opened) {
                onData();
            }
        } else if (frame == status) {
            if (status.tail() == tailId && status.kind() == TailStatusKind.OPENED) {
                opened = true;
                if (openFrom == TailFrom.END && lastReceived < 0) {
                    // a resume must continue after the last index the replica held when the tail opened, not its new end
                    openFrom = status.after() >= 0 ? TailFrom.AFTER : TailFrom.START;
                    openIndex = status.after();
                }
            }
        } else if (frame == end) {
            if (end.tail() == tailId) {
                ended = end.reason();
                endMessage = end.message();
                endFirst = end.first();
                endLast = end.last();
            }
        } else {
            ended = refused.reason();
            endMessage = refused.message();
            endLast = -1;
        }
    }

    private void onData() {
        long index = data.index();
        int total = data.total();
        int pieceOffset = data.pieceOffset();
        int piece = data.pieceLength();
        if (index <= lastReceived) {
            return; // never twice, never backwards
        }
        if (pieceOffset == 0) {
            assemblingIndex = index;
            assembled = 0;
            if (assembling.length < total) {
                assembling = new byte[Math.max(total, assembling.length * 2)];
            }
        } else if (index != assemblingIndex || pieceOffset != assembled) {
            return; // a piece out of place: cannot happen on one Aeron stream; the silence check resumes if it did
        }
        data.buffer().getBytes(data.pieceAt(), assembling, pieceOffset, piece);
        assembled += piece;
        if (assembled < total) {
            return;
        }
        if (count == WINDOW) {
            return; // more than the credit allowed: dropped; a resume asks again after the last one kept
        }
        int slot = (head + count) % WINDOW;
        if (slots[slot] == null || slots[slot].length < total) {
            slots[slot] = new byte[Math.max(total, 256)];
        }
        System.arraycopy(assembling, 0, slots[slot], 0, total);
        slotLengths[slot] = total;
        slotIndexes[slot] = index;
        count++;
        lastReceived = index;
        assemblingIndex = -1;
    }

    private void grant(long now) {
        RemoteQueue.Connection c = connection;
        lastGrantNanos = now;
        if (c == null || !opened) {
            return;
        }
        int length = creditEncoder.wrap(tx, 0).encode(c.id, ++c.txSequence, tailId, grantPending);
        c.mac.sign(tx, 0, length);
        if (c.link.offer(tx, 0, length) > 0) {
            grantPending = 0;
        }
        // not offered: the grant goes with the next one; silence from the node then resumes elsewhere
    }

    private RemoteQueueException refused(ClientRefusal r) {
        return new RemoteQueueException(queueName, r == ClientRefusal.UNAUTHENTICATED ? RemoteQueueException.Reason.UNAUTHENTICATED
                : RemoteQueueException.Reason.REFUSED, r, false, "tail: " + endMessage, null);
    }

    private void disconnect() {
        if (connection != null) {
            queue.tailConnection(null, 0);
            connection.link.close();
            connection = null;
        }
        opened = false;
    }

    private void checkOpen() {
        if (closed) {
            throw new RemoteQueueException(queueName, RemoteQueueException.Reason.CLOSED, "the remote tailer is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        disconnect();
        opener.destroy();
        if (documentBytes != null) {
            documentBytes.releaseLast();
        }
        queue.tailerClosed();
    }
}
