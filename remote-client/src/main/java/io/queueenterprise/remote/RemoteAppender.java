package io.queueenterprise.remote;

import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.ExcerptSealer;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.protocol.client.ClientProtocol;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.wire.Wire;
import net.openhft.chronicle.wire.WireType;
import net.openhft.chronicle.wire.WriteMarshallable;

import java.nio.ByteBuffer;

/**
 * Seals each write (unbound envelope: the client never learns the index before sending) straight into its slot of
 * the append window ({@link AppendWindow}), tags it with the queue's write key for its key version
 * ({@link io.queueenterprise.protocol.client.WriteTag}), and hands it to the window's {@link AppendMachine}, which
 * sends it and takes its acknowledgement. A resend sends the same envelope again, so the leader recognises it.
 *
 * <p>Two ways to write, on one window: {@code write} (the {@link QueueAppender} methods) returns the index once the
 * queue's ack mode is met, as before; {@link #writeAsync} returns once the append is in the window and tells the
 * {@link AppendListener} later, so up to the window is in flight. When the window is full (count or bytes) either
 * waits, driving the connection, up to the back-pressure timeout, then throws {@link RemoteQueueException}
 * {@code WINDOW_FULL} (nothing of that write was sent). One thread; not thread-safe.
 */
public final class RemoteAppender implements QueueAppender, AppendMachine.Settled {
    /** Appends that wait for a batch at most: the most one step offers. */
    static final int SEND_BATCH = AppendMachine.SENDS_PER_STEP;
    /** The adaptive default's batching, on from {@link RemoteQueue#ADAPTIVE_IN_FLIGHT} appends in flight until none is. */
    private boolean streamingAhead;
    private final RemoteQueue queue;
    private final ExcerptSealer sealer;
    private final AppendWindow window;
    private final AppendListener listener;
    private long lastIndex = -1;
    private Bytes<byte[]> documentBytes;
    private Wire documentWire;
    private boolean closed;
    /** A failure settled the window: the epoch's sequences are spent, the next write seals under a new epoch. */
    private boolean epochSpent;
    /** The blocking write waiting now: settled, and how. */
    private boolean blockingSettled;
    private long blockingIndex;
    private RemoteQueueException blockingFailure;

    RemoteAppender(RemoteQueue queue, ExcerptSealer sealer, AppendWindow window, AppendListener listener) {
        this.queue = queue;
        this.sealer = sealer;
        this.window = window;
        this.listener = listener;
    }

    // ------------------------------------------------------------------------------------------------ blocking

    @Override
    public long write(byte[] src, int offset, int length) {
        java.util.Objects.checkFromIndexSize(offset, length, src.length);
        int at = reserve(length);
        System.arraycopy(src, offset, frameBytes(), at + ClientProtocol.APPEND_ENVELOPE + Envelope.PAYLOAD_OFFSET, length);
        return awaitBlocking(at, length);
    }

    @Override
    public long write(ByteBuffer src) {
        int length = src.remaining();
        int at = reserve(length);
        src.get(src.position(), frameBytes(), at + ClientProtocol.APPEND_ENVELOPE + Envelope.PAYLOAD_OFFSET, length);
        long index = awaitBlocking(at, length);
        src.position(src.position() + length); // consumed only once appended
        return index;
    }

    @Override
    public long write(BytesStore<?, ?> src) {
        int length = Math.toIntExact(src.readRemaining());
        int at = reserve(length);
        src.read(src.readPosition(), frameBytes(), at + ClientProtocol.APPEND_ENVELOPE + Envelope.PAYLOAD_OFFSET, length);
        return awaitBlocking(at, length);
    }

    @Override
    public long writeDocument(WriteMarshallable document) {
        if (documentBytes == null) {
            documentBytes = Bytes.allocateElasticOnHeap(256);
            documentWire = WireType.BINARY_LIGHT.apply(documentBytes);
        }
        documentBytes.clear();
        document.writeMarshallable(documentWire);
        return write(documentBytes);
    }

    private long awaitBlocking(int at, int length) {
        blockingSettled = false;
        blockingFailure = null;
        commit(at, length, 0, true);
        AppendMachine m = queue.appendMachine();
        while (!blockingSettled) {
            queue.idle(m.step(queue.nanoTime()));
        }
        if (blockingFailure != null) {
            RemoteQueueException failure = blockingFailure;
            blockingFailure = null;
            throw failure;
        }
        return blockingIndex;
    }

    // ------------------------------------------------------------------------------------------------ asynchronous

    /**
     * Seals and adds one append to the window without waiting for its acknowledgement: its index (or failure) goes to
     * the listener with {@code correlation}, in write order. Waits while the window is full, up to the back-pressure
     * timeout (then {@code WINDOW_FULL}, nothing sent). Allocation-free in steady state.
     */
    public void writeAsync(byte[] src, int offset, int length, long correlation) {
        java.util.Objects.checkFromIndexSize(offset, length, src.length);
        requireListener();
        int at = reserve(length);
        System.arraycopy(src, offset, frameBytes(), at + ClientProtocol.APPEND_ENVELOPE + Envelope.PAYLOAD_OFFSET, length);
        commit(at, length, correlation, false);
        sendNow();
    }

    /** {@link #writeAsync(byte[], int, int, long)} of the buffer's remaining bytes (consumed). */
    public void writeAsync(ByteBuffer src, long correlation) {
        requireListener();
        int length = src.remaining();
        int at = reserve(length);
        src.get(src.position(), frameBytes(), at + ClientProtocol.APPEND_ENVELOPE + Envelope.PAYLOAD_OFFSET, length);
        src.position(src.position() + length);
        commit(at, length, correlation, false);
        sendNow();
    }

    /**
     * Steps the machine until the new append is offered (a few steps: from IDLE it first checks the connection),
     * unless {@link RemoteQueue.Builder#sendBatching} (or its adaptive default, from 16 appends sent and not yet
     * acknowledged until none is) lets it wait for the next ones: earlier appends are in flight,
     * fewer than {@link #SEND_BATCH} wait, and the machine was stepped less than the linger ago. Smart batching as in
     * the Disruptor: under load each step sends what accumulated since the last one, so the leader reads many appends
     * per datagram and per duty cycle instead of one (a step on the embedded driver is a send and a receive system call).
     */
    private void sendNow() {
        AppendMachine m = queue.appendMachine();
        int unsent = window.size() - window.nextToSend();
        long linger = queue.sendBatchingNanos();
        if (linger == RemoteQueue.SEND_BATCHING_ADAPTIVE) {
            // The default: wait only while streaming ahead of the acknowledgements, where waiting costs the append little.
            // On from 16 in flight, off only once none is: a coalesced ack that settles most of the window in one frame
            // would otherwise send the next writes one datagram each until 16 are in flight again.
            int inFlight = window.nextToSend();
            if (inFlight >= RemoteQueue.ADAPTIVE_IN_FLIGHT) {
                streamingAhead = true;
            } else if (inFlight == 0) {
                streamingAhead = false;
            }
            linger = streamingAhead ? RemoteQueue.ADAPTIVE_LINGER_NANOS : 0;
        }
        if (linger > 0 && unsent < window.size() && unsent < SEND_BATCH && queue.nanoTime() - m.lastStepNanos() < linger) {
            return;
        }
        for (int i = 0; i < 4 && window.hasUnsent(); i++) {
            if (m.step(queue.nanoTime()) == 0) {
                return;
            }
        }
    }

    /** Drives the connection once: sends what the window holds, takes answers, tells the listener; the work done. */
    public int poll() {
        return queue.appendMachine().step(queue.nanoTime());
    }

    /** Drives the connection until every append written so far is settled (each within its ack timeout). */
    public void flush() {
        AppendMachine m = queue.appendMachine();
        while (!window.isEmpty()) {
            queue.idle(m.step(queue.nanoTime()));
        }
    }

    /** Appends written and not yet settled. */
    public int inFlight() {
        return window.size();
    }

    private void requireListener() {
        if (listener == null) {
            throw new IllegalStateException("queue '" + queue.name() + "': writeAsync needs an AppendListener"
                    + " (RemoteQueue.createAppender(listener))");
        }
    }

    // ------------------------------------------------------------------------------------------------ window

    private byte[] frameBytes() {
        return window.frames().byteArray();
    }

    /** Room in the window for the APPEND of {@code length} plaintext bytes, waiting for it; the frame's offset. */
    private int reserve(int length) {
        if (closed) {
            throw new IllegalStateException("appender of queue '" + queue.name() + "' is closed");
        }
        int frameLength = ClientProtocol.APPEND_OVERHEAD + Envelope.sealedLength(sealer.mode(), length);
        if (frameLength > AppendWindow.MAX_FRAME) {
            throw new RemoteQueueException(queue.name(), RemoteQueueException.Reason.TOO_LARGE, null, false,
                    "excerpt of " + length + " bytes; a remote write carries at most " + (AppendWindow.MAX_FRAME
                    - ClientProtocol.APPEND_OVERHEAD - Envelope.overhead(sealer.mode())) + " bytes", null);
        }
        if (!window.hasRoom(frameLength)) {
            AppendMachine m = queue.appendMachine();
            long deadline = queue.nanoTime() + queue.backPressureTimeoutNanos();
            while (!window.hasRoom(frameLength)) {
                long now = queue.nanoTime();
                if (now - deadline > 0) {
                    throw new RemoteQueueException(queue.name(), RemoteQueueException.Reason.WINDOW_FULL, null, false,
                            "the append window (" + window.size() + " of " + window.capacity() + " appends, " + window.bytes()
                            + " of " + window.maxBytes() + " bytes) stayed full for "
                            + queue.backPressureTimeoutNanos() / 1_000_000 + " ms", null);
                }
                queue.idle(m.step(now));
            }
        }
        if (epochSpent) {
            // the failed window's sequences may or may not be in the queue; a node takes only an epoch's next one
            sealer.newEpoch();
            epochSpent = false;
        }
        return window.reserve(frameLength);
    }

    /** Seals and tags the envelope of {@code plaintextLength} bytes in the reserved slot and adds it to the window. */
    private void commit(int at, int plaintextLength, long correlation, boolean blocking) {
        byte[] frame = frameBytes();
        int envelopeAt = at + ClientProtocol.APPEND_ENVELOPE;
        int envelopeLength = sealer.sealUnbound(frame, envelopeAt, plaintextLength);
        // the write tag proves this client holds the queue's master key (the node holds only the derived write key)
        queue.writeTag(Envelope.keyId(frame, envelopeAt))
                .sign(frame, envelopeAt, envelopeLength, frame, at + ClientProtocol.APPEND_WRITE_TAG);
        long epoch = Envelope.epoch(frame, envelopeAt);
        int sequence = Envelope.sequence(frame, envelopeAt);
        window.commit(epoch, sequence, envelopeLength, correlation, blocking, queue.nanoTime() + queue.ackTimeoutNanos());
        queue.appendMachine().added();
    }

    @Override
    public void acknowledged(long correlation, boolean blocking, long index) {
        lastIndex = index;
        if (blocking) {
            blockingIndex = index;
            blockingSettled = true;
        } else {
            listener.onAcknowledged(correlation, index);
        }
    }

    @Override
    public void failed(long correlation, boolean blocking, RemoteQueueException failure) {
        epochSpent = true;
        if (blocking) {
            blockingFailure = failure;
            blockingSettled = true;
        } else {
            listener.onFailed(correlation, failure);
        }
    }

    @Override
    public long lastIndexAppended() {
        return lastIndex;
    }

    /** Waits for the appends in flight to settle (each within its ack timeout), then closes. */
    @Override
    public void close() {
        if (!closed) {
            try {
                flush();
            } finally {
                closed = true;
                sealer.destroy();
                if (documentBytes != null) {
                    documentBytes.releaseLast();
                }
                queue.appenderClosed();
            }
        }
    }
}
