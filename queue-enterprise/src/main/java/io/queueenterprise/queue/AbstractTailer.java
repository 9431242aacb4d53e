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
    /** What the queue recorded as written, outside its cycle files: how a loss is told from the end. */
    private final WrittenMarks.Reader written;
    private final net.openhft.chronicle.queue.RollCycle rollCycle;
    /** The cycle of the excerpt read last (or moved to); {@link #NO_CYCLE} after toStart/toEnd. */
    private int previousCycle = NO_CYCLE;
    private static final int NO_CYCLE = Integer.MIN_VALUE;
    /** Excerpts up to this index were reported lost and the caller went on ({@link #skipDamaged}): not reported again. */
    private long lossAcceptedThrough = -1;
    /** The loss the last read reported: where {@link #skipDamaged} goes on from. */
    private ExcerptsLostException reportedLoss;

    AbstractTailer(String queueName, ExcerptTailer tailer, LastIndexWatch lastIndexWatch, net.openhft.chronicle.core.values.LongValue replicatedReadsGate,
                   WrittenMarks.Reader written) {
        this.queueName = queueName;
        this.tailer = tailer;
        this.lastIndexWatch = lastIndexWatch;
        this.replicatedReadsGate = replicatedReadsGate;
        this.written = written;
        this.rollCycle = tailer.queue().rollCycle();
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
        long recorded = written.highWater();
        DocumentContext dc = next();
        try {
            if (!dc.isPresent()) {
                checkNotHidden(knownLast);
                checkNotLost(recorded);
                return -1;
            }
            long index = dc.index();
            int cycle = rollCycle.toCycle(index);
            if (cycle > previousCycle + 1 && previousCycle != NO_CYCLE) {
                checkNoCycleMissing(cycle, index);
            }
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
            previousCycle = cycle;
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

    /**
     * Nothing to read at this index, yet the queue recorded a completed excerpt at or after it (its high-water mark,
     * read before looking): the excerpts from here on were written and are gone, the cycle file cut short.
     */
    private void checkNotLost(long recorded) {
        long here = tailer.index();
        if (recorded < here || recorded <= lossAcceptedThrough) {
            return;
        }
        int cycle = rollCycle.toCycle(here);
        long resume = rollCycle.toCycle(recorded) > cycle ? written.firstIndexAfterCycle(cycle) : -1;
        throw report(new ExcerptsLostException(queueName, here, resume < 0 ? recorded : ExcerptException.UNKNOWN_INDEX,
                resume, "the queue recorded excerpts up to 0x" + Long.toHexString(recorded) + " as written (its"
                + " high-water mark in metadata.cq4t) but " + written.cycleFile(cycle) + " ends before 0x"
                + Long.toHexString(here) + ": that cycle file was truncated"));
    }

    /** The read jumped cycles: a cycle logged as written between them has lost its file. Rare (not every read). */
    private void checkNoCycleMissing(int cycle, long index) {
        if (index <= lossAcceptedThrough) {
            return;
        }
        int[] missing = written.missingCyclesBetween(previousCycle, cycle);
        if (missing.length == 0) {
            return;
        }
        StringBuilder files = new StringBuilder();
        for (int c : missing) {
            files.append(files.length() == 0 ? "" : ", ").append(written.cycleFile(c));
        }
        throw report(new ExcerptsLostException(queueName, rollCycle.toIndex(missing[0], 0),
                ExcerptException.UNKNOWN_INDEX, index, "cycle file" + (missing.length > 1 ? "s " : " ") + files
                + (missing.length > 1 ? ", logged as written (" : ", logged as written (") + WrittenMarks.CYCLE_LOG
                + "), " + (missing.length > 1 ? "are" : "is") + " missing"));
    }

    private ExcerptsLostException report(ExcerptsLostException loss) {
        reportedLoss = loss;
        return loss;
    }

    @Override
    public final long skipDamaged() {
        if (reportedLoss != null) {
            return skipLoss();
        }
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

    /** Accepts the loss the last read reported and goes on after it: its resume index, or the end. */
    private long skipLoss() {
        ExcerptsLostException loss = reportedLoss;
        reportedLoss = null;
        long resume = loss.resumeIndex();
        if (resume < 0) {
            lossAcceptedThrough = Math.max(lossAcceptedThrough, loss.lastLost());
            return -1;
        }
        lossAcceptedThrough = Math.max(lossAcceptedThrough, resume - 1);
        return moveToIndex(resume) ? resume : -1;
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
            boolean found = tailer.moveToIndex(index);
            previousCycle = found ? rollCycle.toCycle(index) : NO_CYCLE;
            return found;
        } catch (RuntimeException | InternalError e) {
            throw classify(e, index, "cannot move to the excerpt");
        }
    }

    @Override
    public QueueTailer toStart() {
        try {
            moved();
            previousCycle = NO_CYCLE;
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
            previousCycle = NO_CYCLE;
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

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + queueName + "]";
    }
}
