package io.queueenterprise.replication.engine;

import io.queueenterprise.queue.ReplicaStore;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The one thread that writes one queue's store: a follower's excerpts at their indexes ({@link ReplicaStore#writeAt}),
 * with their checksums, and the scan for the queue's last index at a role change. Chronicle can block any of these
 * for seconds (a live writer stalled while holding the queue's write lock: up to its 15 s lock timeout; a SIGKILLed
 * writer's lock and open header: 20-40 s measured); here only this queue waits, while the duty thread goes on driving
 * the media driver, the heartbeats and every other queue.
 *
 * <p>Hand-off: an Agrona {@link OneToOneRingBuffer} (the duty thread the only producer, this thread the only
 * consumer; excerpts are copied in once, from Aeron's buffer, and written to the store from where they lie in the
 * ring, nothing is allocated per excerpt). A full ring is the duty thread's signal to stop
 * reading (back-pressure), never to buffer more. What this thread has <em>written</em> is published in
 * {@link #writtenIndex()}: the follower acknowledges that, never what it merely handed over.
 *
 * <p>When there is nothing to do the thread parks (at most {@link ExcerptChecksums#FLUSH_NANOS}, to write checksum
 * records out); the duty thread unparks it after a hand-off only when it said it was about to park. It never spins.
 *
 * <p>The store and the checksum file are this thread's while messages are in flight; the duty thread touches them
 * (a quarantine rebuild, a descriptor install, close) only when {@link #drained()}, and under this object's lock,
 * which this thread holds while it works.
 */
final class QueueWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(QueueWriter.class);
    /** Ring capacity: 2 MiB, so that a batch of 64 KiB fits 32 times over and one excerpt of a batch always fits. */
    static final int RING_CAPACITY = 2 * 1024 * 1024;
    private static final int WRITE = 1;
    private static final int WRITE_ASSEMBLED = 2;
    private static final int FIND_LAST = 3;
    private static final int RESUME = 4;
    /** Record header of the ring (length and type) plus the excerpt's index, rounded up as the ring aligns. */
    static final int RECORD_OVERHEAD = 8 + 8 + 8;
    /** findLast's answer when the scan failed (the reason is in {@link #failure()}). */
    static final long SCAN_FAILED = Long.MIN_VALUE;

    private final String name;
    private final OneToOneRingBuffer ring;
    private final Thread thread;
    private final MessageHandler handler = this::onMessage;
    /** The ring's memory, for the checksum of an excerpt read where it lies (its position and limit: this thread's). */
    private final ByteBuffer ringBytes;

    // owned by this thread while messages are in flight (see the class comment)
    private ReplicaStore store;
    private ExcerptChecksums checksums;
    /**
     * A large excerpt assembled by the duty thread, handed over whole (not through the ring): a view of its array, made
     * again only when the array is another (it grows to the largest excerpt); position and limit are this thread's.
     */
    private ByteBuffer assembled;

    // duty thread → this thread
    private volatile boolean running = true;
    /** Messages handed over so far (duty thread only). */
    private long offered;

    // this thread → duty thread
    private volatile boolean sleeping;
    private volatile long completed;
    private volatile long writtenIndex;
    private volatile long bytesWritten;
    private volatile String failure;
    private volatile boolean failureIsDiskFull;
    /** Failed writes so far: each one is reported once. */
    private volatile long failures;
    private volatile long foundGeneration = -1;
    private volatile long foundLastIndex;
    /** System.nanoTime() when the operation in progress began, 0 when none: how long this queue has been blocked. */
    private volatile long busySinceNanos;
    /** After a failed write, until RESUME: what is handed over is passed over, not written. */
    private volatile boolean discarding;

    QueueWriter(String nodeId, String queueName, ReplicaStore store, ExcerptChecksums checksums, long lastIndex) {
        this.name = queueName;
        this.store = store;
        this.checksums = checksums;
        this.writtenIndex = lastIndex;
        ByteBuffer memory = ByteBuffer.allocateDirect(RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH);
        this.ring = new OneToOneRingBuffer(new UnsafeBuffer(memory));
        this.ringBytes = memory.duplicate();
        this.thread = new Thread(this::run, "qe-writer-" + nodeId + "-" + queueName);
        thread.setDaemon(true);
        thread.start();
    }

    // ------------------------------------------------------------------------------------------------ duty thread

    /** Whether the ring has room for {@code bytes} of excerpts in {@code count} records (a DATA batch). */
    boolean hasRoomFor(int count, int bytes) {
        long needed = (long) count * RECORD_OVERHEAD + bytes;
        return RING_CAPACITY - ring.size() >= needed;
    }

    /**
     * Hands the excerpt at {@code index} over (the caller checked {@link #hasRoomFor} for its batch).
     *
     * @return false when the ring is full after all (nothing handed over)
     */
    boolean write(long index, DirectBuffer src, int offset, int length) {
        int claimed = ring.tryClaim(WRITE, 8 + length);
        if (claimed <= 0) {
            return false;
        }
        MutableDirectBuffer buffer = ring.buffer();
        buffer.putLong(claimed, index);
        // The follower's first copy, from Aeron's buffer (MAC verified there): the bytes must outlive this duty cycle,
        // since Aeron reuses its buffers once the fragment is consumed, and the write is the writer thread's.
        buffer.putBytes(claimed + 8, src, offset, length);
        ring.commit(claimed);
        offered++;
        return true;
    }

    /**
     * Hands over a large excerpt assembled in {@code bytes}, which the caller leaves alone until {@link #drained()}.
     *
     * @return false when the ring is full (nothing handed over)
     */
    boolean writeAssembled(long index, byte[] bytes, int length) {
        int claimed = ring.tryClaim(WRITE_ASSEMBLED, 12);
        if (claimed <= 0) {
            return false;
        }
        if (assembled == null || assembled.array() != bytes) {
            assembled = ByteBuffer.wrap(bytes); // published by the ring's commit
        }
        ring.buffer().putLong(claimed, index);
        ring.buffer().putInt(claimed + 8, length);
        ring.commit(claimed);
        offered++;
        return true;
    }

    /**
     * Asks for the queue's last index once everything handed over before is written; answered through
     * {@link #foundLastIndex(long)} for {@code generation}. Spins never: a full ring is retried by the caller.
     */
    boolean findLast(long generation) {
        int claimed = ring.tryClaim(FIND_LAST, 8);
        if (claimed <= 0) {
            return false;
        }
        ring.buffer().putLong(claimed, generation);
        ring.commit(claimed);
        offered++;
        return true;
    }

    /** After a failed write was reported: write again what comes next. */
    boolean resume() {
        int claimed = ring.tryClaim(RESUME, 0);
        if (claimed <= 0) {
            return false;
        }
        ring.commit(claimed);
        offered++;
        return true;
    }

    /** Wakes the thread if it parked: once per duty cycle that handed something over, not per excerpt. */
    void wake() {
        java.lang.invoke.VarHandle.fullFence(); // the ring's commit before reading `sleeping` (its Dekker pair in run)
        if (sleeping) {
            LockSupport.unpark(thread);
        }
    }

    /** Everything handed over was done (written, scanned or discarded). */
    boolean drained() {
        return completed == offered;
    }

    long writtenIndex() {
        return writtenIndex;
    }

    long bytesWritten() {
        return bytesWritten;
    }

    /** Why the latest write (or scan) failed, or null when none did. */
    String failure() {
        return failure;
    }

    /** A write failed and nothing is written until {@link #resume()}. */
    boolean discarding() {
        return discarding;
    }

    long failures() {
        return failures;
    }

    boolean failureIsDiskFull() {
        return failureIsDiskFull;
    }

    /** The last index found for {@code generation}, {@link #SCAN_FAILED}, or null while not found yet. */
    Long foundLastIndex(long generation) {
        return foundGeneration == generation ? foundLastIndex : null;
    }

    /** How long the operation in progress has been running (0: none). */
    long busyNanos(long now) {
        long since = busySinceNanos;
        return since == 0 ? 0 : now - since;
    }

    /** The store and checksums after a quarantine rebuild; only when {@link #drained()}. */
    void replaceStore(ReplicaStore newStore, ExcerptChecksums newChecksums, long lastIndex) {
        synchronized (this) {
            store = newStore;
            checksums = newChecksums;
            writtenIndex = lastIndex;
        }
    }

    /**
     * Stops the thread, waiting up to {@code timeout}; returns false when it is still blocked inside Chronicle (its
     * store must then not be closed under it).
     */
    boolean stop(long timeout, TimeUnit unit) {
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join(unit.toMillis(timeout));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn(name + ": writer thread still blocked in the store after " + timeout + " "
                    + unit + "; its store is left open");
            return false;
        }
        return true;
    }

    @Override
    public void close() {
        stop(5, TimeUnit.SECONDS);
    }

    // ------------------------------------------------------------------------------------------------ writer thread

    private void run() {
        while (running) {
            int done;
            synchronized (this) {
                done = ring.read(handler, 256);
                if (checksums != null) {
                    try {
                        checksums.flushIfDue(System.nanoTime());
                    } catch (RuntimeException e) {
                        LOG.warn(name + ": " + e);
                    }
                }
            }
            if (done == 0) {
                sleeping = true;
                java.lang.invoke.VarHandle.fullFence(); // `sleeping` before reading the ring (its Dekker pair in wake)
                if (ring.size() == 0 && running) {
                    LockSupport.parkNanos(ExcerptChecksums.FLUSH_NANOS);
                }
                sleeping = false;
            }
        }
    }

    private void onMessage(int type, MutableDirectBuffer buffer, int offset, int length) {
        busySinceNanos = System.nanoTime();
        try {
            switch (type) {
                // an excerpt in the ring is written where it lies; the ring's space is released only after this returns
                case WRITE -> store(buffer.getLong(offset), ringBytes.clear().position(offset + 8).limit(offset + length));
                case WRITE_ASSEMBLED -> store(buffer.getLong(offset), assembled.clear().limit(buffer.getInt(offset + 8)));
                case FIND_LAST -> scanLastIndex(buffer.getLong(offset));
                case RESUME -> discarding = false;
                default -> throw new IllegalStateException("unknown writer message " + type);
            }
        } finally {
            busySinceNanos = 0;
            completed = completed + 1; // one writer: a plain increment, published by the volatile store
        }
    }

    /**
     * Writes the excerpt at {@code index} from {@code bytes}' remaining bytes: the ring's memory ({@link #ringBytes}),
     * which Chronicle copies straight into the mapped file (the follower's second and last copy), or an assembled
     * excerpt's array. The checksum reads the same bytes where they lie.
     */
    private void store(long index, ByteBuffer bytes) {
        if (discarding) {
            return; // after a failure: the duty thread resynchronises from what is written
        }
        int length = bytes.remaining();
        try {
            if (bytes == ringBytes) {
                store.writeAt(index, ring.buffer().addressOffset() + bytes.position(), length);
            } else {
                store.writeAt(index, bytes.array(), bytes.position(), length);
            }
        } catch (RuntimeException | Error e) {
            failed(index, e);
            return;
        }
        checksums.record(index, bytes);
        bytesWritten = bytesWritten + length;
        writtenIndex = index;
    }

    private void failed(long index, Throwable e) {
        discarding = true;
        failureIsDiskFull = FollowerSession.isDiskFull(e);
        failure = "cannot store excerpt 0x" + Long.toHexString(index) + ": " + e;
        failures = failures + 1; // after the text: the duty thread reads the count first
    }

    private void scanLastIndex(long generation) {
        long last;
        try {
            last = store.lastIndex(); // Chronicle's end scan: seconds on a copy a killed writer left mid-excerpt
        } catch (RuntimeException e) {
            failure = "cannot find the last index: " + e;
            last = SCAN_FAILED;
        }
        if (last != SCAN_FAILED && !discarding) {
            writtenIndex = Math.max(writtenIndex, last);
        }
        foundLastIndex = last;
        foundGeneration = generation; // after the index: the duty thread reads the generation first
    }
}
