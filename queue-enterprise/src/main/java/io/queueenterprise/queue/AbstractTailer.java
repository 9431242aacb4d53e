package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;
import net.openhft.chronicle.wire.ReadMarshallable;
import net.openhft.chronicle.wire.Wire;

import java.nio.ByteBuffer;

/**
 * The read protocol shared by plain and encrypted tailers: take the next excerpt, make its
 * plaintext available ({@link #open}), copy it out, and only then let Chronicle move on. Any failure
 * rolls the read back, so the excerpt is neither lost nor skipped.
 */
abstract class AbstractTailer implements QueueTailer {
    /** Where {@link #readNext} puts the plaintext. */
    private static final int TO_ARRAY = 0;
    private static final int TO_BUFFER = 1;
    private static final int TO_BYTES = 2;
    private static final int TO_READER = 3;

    protected final String queueName;
    private final ExcerptTailer tailer;
    private final LastIndexWatch lastIndexWatch;
    /** Replicated reads: the queue whose acknowledged (majority-held) index bounds what is read; null: no bound. */
    private final net.openhft.chronicle.core.values.LongValue replicatedReadsGate;
    private long lastReadIndex = -1;

    AbstractTailer(String queueName, ExcerptTailer tailer, LastIndexWatch lastIndexWatch, net.openhft.chronicle.core.values.LongValue replicatedReadsGate) {
        this.queueName = queueName;
        this.tailer = tailer;
        this.lastIndexWatch = lastIndexWatch;
        this.replicatedReadsGate = replicatedReadsGate;
        lastIndexWatch.acquire();
    }

    /**
     * Makes the plaintext of the excerpt in {@code excerpt} available to the copy methods; returns its length.
     * {@code capacity} is where the copy goes: an excerpt that cannot fit must still be found damaged first if it is.
     */
    protected abstract int open(long index, Bytes<?> excerpt, int capacity);

    protected abstract void copyTo(byte[] dst, int offset, int length);

    protected abstract void copyTo(ByteBuffer dst, int length);

    protected abstract void copyTo(Bytes<?> dst, int length);

    /** The opened plaintext as a binary Wire positioned at its start (for Wire documents). */
    protected abstract Wire documentWire(DocumentContext dc, int length);

    /** The tailer was moved (to an index, the start or the end): what it read before no longer precedes what comes. */
    protected void moved() {
    }

    @Override
    public final int read(byte[] dst, int offset, int capacity) {
        return readNext(TO_ARRAY, dst, offset, capacity, null, null, null);
    }

    @Override
    public final int read(ByteBuffer dst) {
        return readNext(TO_BUFFER, null, 0, dst.remaining(), dst, null, null);
    }

    @Override
    public final boolean read(Bytes<?> dst) {
        return readNext(TO_BYTES, null, 0, Integer.MAX_VALUE, null, dst, null) >= 0;
    }

    @Override
    public final boolean readDocument(ReadMarshallable reader) {
        return readNext(TO_READER, null, 0, Integer.MAX_VALUE, null, null, reader) >= 0;
    }

    /**
     * The one read protocol behind every read form (a switch rather than a lambda, so the hot path
     * allocates nothing). Returns the plaintext length, or -1 when there is no excerpt yet.
     */
    private int readNext(int target, byte[] array, int offset, int capacity, ByteBuffer buffer, Bytes<?> bytes,
                         ReadMarshallable reader) {
        if (hiddenUntilReplicated()) {
            return -1;
        }
        // Read BEFORE looking: an excerpt counted complete before the attempt cannot be "not there yet" after it.
        long knownLast = lastIndexWatch.lastIndex();
        DocumentContext dc = next();
        try {
            if (!dc.isPresent()) {
                checkNotHidden(knownLast);
                return -1;
            }
            long index = dc.index();
            int length = open(index, dc.wire().bytes(), capacity);
            if (length > capacity) {
                throw new BufferTooSmallException(queueName, index, length, capacity);
            }
            switch (target) {
                case TO_ARRAY:
                    copyTo(array, offset, length);
                    break;
                case TO_BUFFER:
                    copyTo(buffer, length);
                    break;
                case TO_BYTES:
                    copyTo(bytes, length);
                    break;
                default:
                    // A reader that throws leaves the excerpt unconsumed, like any other failed read.
                    reader.readMarshallable(documentWire(dc, length));
                    break;
            }
            lastReadIndex = index;
            return length;
        } catch (RuntimeException | Error e) {
            dc.rollbackOnClose();
            throw e;
        } finally {
            dc.close();
        }
    }

    /**
     * Nothing to read here, yet the queue holds a LATER excerpt in the same cycle: the excerpt here is damaged
     * and would hide every excerpt after it. (Here equal to the last index is the normal tail: Chronicle counts
     * an excerpt still being written, or torn by a killed writer and not yet recovered.) One volatile read;
     * see {@link LastIndexWatch}. Damage to the very last excerpt is found once another one follows it.
     */
    private void checkNotHidden(long last) {
        long here = tailer.index();
        if (last >= 0 && here < last && tailer.queue().rollCycle().toCycle(here) == tailer.queue().rollCycle().toCycle(last)) {
            throw new CorruptedQueueException(queueName, here, "the excerpt cannot be read although the queue holds "
                    + "excerpts up to index 0x" + Long.toHexString(last) + " in "
                    + CorruptedQueueException.cycleFile(tailer.queue(), here)
                    + ": its header is damaged; skipDamaged() moves to the next intact excerpt", null);
        }
    }

    @Override
    public final long skipDamaged() {
        long from = Math.max(tailer.index(), lastReadIndex + 1);
        lastIndexWatch.refresh();
        long last = lastIndexWatch.lastIndex();
        for (long candidate = from + 1; candidate <= last; candidate++) {
            try {
                moved();
                if (!tailer.moveToIndex(candidate)) {
                    continue;
                }
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (dc.isPresent() && dc.index() == candidate) {
                        dc.rollbackOnClose(); // leave it for the next read
                        return candidate;
                    }
                }
            } catch (RuntimeException | InternalError damagedToo) {
                if (damagedToo instanceof IllegalStateException) {
                    throw classify(damagedToo, candidate, "cannot move past the damage");
                }
                // still inside the damage: try the next index
            }
        }
        return -1;
    }

    /**
     * Replicated reads: the next excerpt is not yet held by a majority. Chronicle's own
     * {@code readAfterReplicaAcknowledged} is not used because (2026.4) it blocks a tailer in any cycle other than
     * the acknowledged index's, older ones included; comparing indexes is right across cycles.
     */
    private boolean hiddenUntilReplicated() {
        return replicatedReadsGate != null && tailer.index() > replicatedReadsGate.getVolatileValue(-1);
    }

    @Override
    public final boolean skip() {
        if (hiddenUntilReplicated()) {
            return false;
        }
        try (DocumentContext dc = next()) {
            if (!dc.isPresent()) {
                return false;
            }
            lastReadIndex = dc.index();
            return true;
        }
    }

    private DocumentContext next() {
        try {
            return tailer.readingDocument();
        } catch (RuntimeException | InternalError e) {
            throw classify(e, tailer.index(), "cannot read the excerpt");
        }
    }

    /**
     * What a Chronicle failure means: misuse (closed, wrong thread) is a {@link QueueStateException}; anything
     * else while reading the files — including the JVM's InternalError for a fault in mapped memory — is damage.
     */
    private QueueException classify(Throwable e, long index, String what) {
        if (e instanceof QueueException) {
            return (QueueException) e;
        }
        if (e instanceof IllegalStateException) { // Chronicle's ClosedIllegalStateException, thread-safety checks
            return new QueueStateException(queueName, "the tailer cannot be used: " + e.getMessage(), e);
        }
        return CorruptedQueueException.at(queueName, tailer.queue(), index, what, e);
    }

    @Override
    public long lastReadIndex() {
        return lastReadIndex;
    }

    @Override
    public boolean moveToIndex(long index) {
        try {
            moved();
            return tailer.moveToIndex(index);
        } catch (RuntimeException | InternalError e) {
            throw classify(e, index, "cannot move to the excerpt");
        }
    }

    @Override
    public QueueTailer toStart() {
        try {
            moved();
            tailer.toStart();
        } catch (RuntimeException | InternalError e) {
            throw classify(e, ExcerptException.UNKNOWN_INDEX, "cannot move to the start");
        }
        return this;
    }

    @Override
    public QueueTailer toEnd() {
        try {
            moved();
            tailer.toEnd();
        } catch (RuntimeException | InternalError e) {
            throw classify(e, ExcerptException.UNKNOWN_INDEX, "cannot move to the end");
        }
        return this;
    }

    @Override
    public void close() {
        lastIndexWatch.release();
        tailer.close();
    }

    /** Chronicle's index of the next excerpt (where a failure that escaped the read protocol happened). */
    final long chronicleIndex() {
        return tailer.index();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + queueName + "]";
    }
}
