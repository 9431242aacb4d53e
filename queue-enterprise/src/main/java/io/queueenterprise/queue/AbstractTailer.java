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
    private static final int HEADER_LENGTH = 4;
    /** Where the header of the excerpt read last lies in its cycle file: a resync after damage looks from there. */
    private long lastHeaderPosition = -1;
    /** The excerpt whose read failed authentication last, its header and where its length word says it ends. */
    private long failedIndex = -1;
    private long failedHeader;
    private long failedEnd;
    /** While reading past a damaged header, where Chronicle's walk cannot go ({@link CycleResync}); null otherwise. */
    private CycleResync.Found recovered;
    private int recoveredSlot;
    /** The real chain found last by a failed read's check ({@link #relocated}): later failures in it cost no search. */
    private CycleResync.Found knownChain;

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
        if (recovered != null) {
            int length = readRecovered(target, array, offset, capacity, buffer, bytes, reader);
            if (recovered != null || length >= 0) {
                return length;
            }
        }
        // Read BEFORE looking: an excerpt counted complete before the attempt cannot be "not there yet" after it.
        long knownLast = lastIndexWatch.lastIndex();
        DocumentContext dc = next();
        long index = -1;
        long header = -1;
        long recorded = -1;
        RuntimeException failure = null;
        long failureEnd = 0;
        try {
            if (!dc.isPresent()) {
                checkNotHidden(knownLast);
                // The high-water mark is read only here, at the end (a read that finds an excerpt pays nothing): read
                // AFTER the look, so what it counts may have completed since; a second look, after it, decides.
                recorded = written.highWater();
                if (recorded < tailer.index() || recorded <= lossAcceptedThrough) {
                    return -1;
                }
            } else {
                index = dc.index();
            int cycle = rollCycle.toCycle(index);
            if (cycle > previousCycle + 1 && previousCycle != NO_CYCLE) {
                checkNoCycleMissing(cycle, index);
            }
            Bytes<?> excerpt = dc.wire().bytes();
            if (written.cutFiles != null && written.cutFiles.cutAt(cycle) >= 0 && excerpt.readLimit() > written.cutFiles.cutAt(cycle)) {
                if (index <= lossAcceptedThrough) {
                    return -1; // accepted with the loss it starts: consumed, never read as data
                }
                recorded = written.highWater();
                long resume = rollCycle.toCycle(recorded) > cycle ? written.firstIndexAfterCycle(cycle) : -1;
                throw report(new ExcerptsLostException(queueName, index, resume < 0 ? Math.max(index, recorded)
                        : ExcerptException.UNKNOWN_INDEX, resume, "its bytes end at "
                        + excerpt.readLimit() + " but " + written.cycleFile(cycle) + " was cut at "
                        + written.cutFiles.cutAt(cycle) + " bytes: this excerpt is cut short and what followed it is gone"));
            }
            header = excerpt.readPosition() - HEADER_LENGTH;
            int length = open(index, excerpt, capacity);
            if (length > capacity && endsPastTheCycle(index, header, excerpt.readLimit())) {
                throw new CorruptedQueueException(queueName, index, "its length word says it ends past the last excerpt"
                        + " of " + CorruptedQueueException.cycleFile(tailer.queue(), index) + ": the length word, or one"
                        + " before it, is damaged", null);
            }
            deliver(target, array, offset, capacity, buffer, bytes, reader, dc, index, length);
            lastReadIndex = index;
            lastHeaderPosition = header;
            previousCycle = cycle;
            return length;
            }
        } catch (RuntimeException | Error e) {
            dc.rollbackOnClose();
            if (header < 0 || !(e instanceof ExcerptDecryptionException || e instanceof CorruptedQueueException)) {
                throw e;
            }
            failure = (RuntimeException) e;
            failureEnd = dc.wire().bytes().readLimit();
        } finally {
            dc.close();
        }
        if (index < 0) { // nothing here, below the high-water mark: look once more now that the mark was read
            return lookAgainBelowTheMark(recorded, target, array, offset, capacity, buffer, bytes, reader);
        }
        // Is this excerpt damaged, or did a damaged length word before it lead Chronicle into other bytes?
        if (relocated(index, header)) {
            return readRecovered(target, array, offset, capacity, buffer, bytes, reader);
        }
        if (failure instanceof ExcerptDecryptionException) { // skip() checks whether its own length word misleads
            failedIndex = index;
            failedHeader = header;
            failedEnd = failureEnd;
        }
        throw failure;
    }

    /** Whether an excerpt that does not fit reaches past the cycle's last excerpt: impossible, so damage. Rare path. */
    private boolean endsPastTheCycle(long index, long header, long end) {
        net.openhft.chronicle.queue.impl.single.SingleChronicleQueue chronicle = chronicle();
        net.openhft.chronicle.queue.impl.single.SingleChronicleQueueStore store =
                chronicle.storeForCycle(rollCycle.toCycle(index), chronicle.epoch(), false, null);
        if (store == null) {
            return false;
        }
        try {
            long lastHeader = store.writePosition();
            return header != lastHeader && end > lastHeader;
        } finally {
            chronicle.closeStore(store);
        }
    }

    /**
     * A read at {@code index} failed in a way that a damaged length word BEFORE it would also explain: Chronicle
     * walks excerpt by excerpt from the last one its index places, so one wrong length puts every later "excerpt"
     * of its walk inside other bytes. When the real chain ({@link CycleResync}) holds {@code index} somewhere else,
     * reading goes on from the real chain and true is returned; otherwise the failure is the excerpt's own.
     */
    private boolean relocated(long index, long chronicleHeader) {
        CycleResync.Found chain = knownChain != null && knownChain.slotOf(index) >= 0 ? knownChain : null;
        if (chain == null) { // one search per cycle and extent: a wrong key fails every excerpt, not every search
            boolean found = resyncFromIndexed(index);
            knownChain = found ? recovered : null;
            recovered = null;
            chain = knownChain;
            tailer.moveToIndex(index); // back where the failed read left it
        }
        int slot = chain == null ? -1 : chain.slotOf(index);
        if (slot < 0 || chain.dataPositions[slot] - HEADER_LENGTH == chronicleHeader) {
            return false;
        }
        moved();
        recovered = chain;
        recoveredSlot = slot;
        return true;
    }

    /** {@link #resync} from the nearest excerpt before {@code index} that Chronicle's index places exactly. */
    private boolean resyncFromIndexed(long index) {
        int cycle = rollCycle.toCycle(index);
        long spacing = Math.max(1, rollCycle.defaultIndexSpacing());
        long from = 0;
        long after = rollCycle.toIndex(cycle, 0) - 1;
        for (long sequence = rollCycle.toSequenceNumber(index) / spacing * spacing; sequence >= 0; sequence -= spacing) {
            long indexed = rollCycle.toIndex(cycle, sequence);
            if (indexed < index && tailer.moveToIndex(indexed)) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (dc.isPresent()) {
                        from = dc.wire().bytes().readPosition();
                        after = indexed;
                    }
                    dc.rollbackOnClose();
                }
                break;
            }
        }
        return resync(cycle, from, after, false);
    }

    /**
     * The first look found nothing although the high-water mark, read after it, counts an excerpt here as complete:
     * either it completed in between (this look finds it, and it is read) or it is gone (reported lost).
     */
    private int lookAgainBelowTheMark(long recorded, int target, byte[] array, int offset, int capacity,
                                      ByteBuffer buffer, Bytes<?> bytes, ReadMarshallable reader) {
        DocumentContext again = next();
        boolean present;
        try {
            present = again.isPresent();
            again.rollbackOnClose();
        } finally {
            again.close();
        }
        if (present) {
            return readNext(target, array, offset, capacity, buffer, bytes, reader);
        }
        checkNotLost(recorded);
        return -1;
    }

    /** Copies the opened excerpt to the read form's destination. */
    private void deliver(int target, byte[] array, int offset, int capacity, ByteBuffer buffer, Bytes<?> bytes,
                         ReadMarshallable reader, DocumentContext dc, long index, int length) {
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
    }

    /**
     * Reads the next excerpt of a region found past a damaged header ({@link CycleResync}), where Chronicle's own
     * walk cannot go. Returns -1 when the region holds nothing more yet; leaves the region (recovered = null,
     * returning -1) once a later cycle exists to go on with.
     */
    private int readRecovered(int target, byte[] array, int offset, int capacity, ByteBuffer buffer, Bytes<?> bytes,
                              ReadMarshallable reader) {
        if (recoveredSlot >= recovered.count() && !extendRecovered()) {
            return -1;
        }
        long index = recovered.firstIndex + recoveredSlot;
        if (replicatedReadsGate != null && index > replicatedReadsGate.getVolatileValue(-1)) {
            return -1;
        }
        Bytes<?> excerpt = recoveredExcerpt(recoveredSlot);
        try {
            int length = open(index, excerpt, capacity);
            deliver(target, array, offset, capacity, buffer, bytes, reader, null, index, length);
            lastReadIndex = index;
            lastHeaderPosition = recovered.dataPositions[recoveredSlot] - HEADER_LENGTH;
            previousCycle = rollCycle.toCycle(index);
            recoveredSlot++;
            return length;
        } catch (ExcerptDecryptionException e) {
            failedIndex = -1; // already on the real chain: skip() moves to the next slot
            throw e;
        } finally {
            excerpt.releaseLast();
        }
    }

    private Bytes<?> recoveredExcerpt(int slot) {
        byte[] copy = new byte[recovered.lengths[slot]]; // a damage path: a private copy is simplest
        recovered.map.get((int) recovered.dataPositions[slot], copy);
        return Bytes.wrapForRead(copy);
    }

    /**
     * At the end of a recovered region: excerpts written after it in the same cycle extend it; a later cycle
     * hands reading back to Chronicle. False while there is nothing more to read.
     */
    private boolean extendRecovered() {
        int cycle = rollCycle.toCycle(recovered.lastIndex());
        long last = lastIndexIn(cycle);
        if (last > recovered.lastIndex()) {
            int end = recovered.count() - 1;
            CycleResync.Found more = CycleResync.find(chronicle(), cycle,
                    recovered.dataPositions[end] + recovered.lengths[end], last, last - recovered.lastIndex(),
                    recovered.dataPositions[end] - HEADER_LENGTH, recovered.lastIndex());
            if (more != null && more.firstIndex == recovered.lastIndex() + 1) {
                recovered = more;
                recoveredSlot = 0;
                return true;
            }
        }
        long next = written.firstIndexAfterCycle(cycle);
        if (next >= 0 && tailer.moveToIndex(next)) {
            recovered = null;
        }
        return false;
    }

    private net.openhft.chronicle.queue.impl.single.SingleChronicleQueue chronicle() {
        return (net.openhft.chronicle.queue.impl.single.SingleChronicleQueue) tailer.queue();
    }

    /** The last index of {@code cycle} as far as it is known (the queue's last index, or its high-water mark); -1. */
    private long lastIndexIn(int cycle) {
        lastIndexWatch.refresh();
        long last = Math.max(lastIndexWatch.lastIndex(), written.highWater());
        return last >= 0 && rollCycle.toCycle(last) == cycle ? last : -1;
    }

    /**
     * Finds the real chain of excerpts after a damaged header ({@link CycleResync}) and reads on from it: true when
     * the excerpt after {@code afterIndex} (or, if {@code exact} is false, some later one) was found. {@code from} is
     * the data of excerpt {@code afterIndex} as read (its header just before: the anchor the chain must agree with),
     * or 0 to search the cycle from its start without one.
     */
    private boolean resync(int cycle, long from, long afterIndex, boolean exact) {
        long last = lastIndexIn(cycle);
        if (last <= afterIndex) {
            return false;
        }
        long anchorHeader = from >= HEADER_LENGTH ? from - HEADER_LENGTH : -1;
        CycleResync.Found found = CycleResync.find(chronicle(), cycle, from, last, last - afterIndex, anchorHeader, afterIndex);
        if (found == null || (exact && found.firstIndex != afterIndex + 1)) {
            return false;
        }
        moved();
        recovered = found;
        recoveredSlot = 0;
        return true;
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
        // Where Chronicle stands (its own thread check included): a real chain that holds this very excerpt where
        // Chronicle reads it means nothing here is damaged, and the search below keeps its old meaning.
        long hereIndex = -1;
        long hereHeader = -1;
        DocumentContext here;
        try {
            here = next();
        } catch (CorruptedQueueException damagedRightHere) {
            here = null;
        }
        if (here != null) {
            try {
                if (here.isPresent()) {
                    hereIndex = here.index();
                    hereHeader = here.wire().bytes().readPosition() - HEADER_LENGTH;
                }
                here.rollbackOnClose();
            } finally {
                here.close();
            }
        }
        int cycle = rollCycle.toCycle(tailer.index());
        boolean readInCycle = lastReadIndex >= 0 && rollCycle.toCycle(lastReadIndex) == cycle && lastHeaderPosition >= 0;
        if (resync(cycle, readInCycle ? lastHeaderPosition + HEADER_LENGTH : 0,
                readInCycle ? lastReadIndex : rollCycle.toIndex(cycle, 0) - 1, false)) {
            int slot = hereIndex < 0 ? -1 : recovered.slotOf(hereIndex);
            if (slot < 0 || recovered.dataPositions[slot] - HEADER_LENGTH != hereHeader) {
                return recovered.firstIndex;
            }
            recovered = null; // Chronicle stands on the real chain: not a damage the header search answers
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
        if (recovered != null) {
            if (recoveredSlot < recovered.count() || extendRecovered()) {
                long index = recovered.firstIndex + recoveredSlot++;
                lastReadIndex = index;
                previousCycle = rollCycle.toCycle(index);
                return true;
            }
            if (recovered != null) {
                return false;
            }
        }
        if (failedIndex >= 0 && failedIndex == tailer.index() && lengthLeadsAstray()) {
            lastReadIndex = failedIndex;
            failedIndex = -1;
            return true;
        }
        failedIndex = -1;
        try (DocumentContext dc = next()) {
            if (!dc.isPresent()) {
                return false;
            }
            lastReadIndex = dc.index();
            return true;
        }
    }

    /**
     * The excerpt that failed authentication is being skipped: if its length word is what was damaged, Chronicle's
     * next step would land inside other bytes and read them as excerpts (each failing, or worse). When the real
     * chain after it ({@link CycleResync}) has its next excerpt elsewhere, reading goes on from the real chain.
     */
    private boolean lengthLeadsAstray() {
        int cycle = rollCycle.toCycle(failedIndex);
        long chronicleNext = ((failedEnd + 3) & ~3L) + HEADER_LENGTH;
        if (!resync(cycle, failedHeader + HEADER_LENGTH, failedIndex, true)) {
            return false;
        }
        if (recovered.dataPositions[0] == chronicleNext) { // the length was right: Chronicle's walk is the real one
            recovered = null;
            tailer.moveToIndex(failedIndex);
            return false;
        }
        return true;
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
            recovered = null;
            failedIndex = -1;
            boolean found = tailer.moveToIndex(index) || moveIntoDamagedCycle(index);
            previousCycle = found ? rollCycle.toCycle(index) : NO_CYCLE;
            return found;
        } catch (RuntimeException | InternalError e) {
            throw classify(e, index, "cannot move to the excerpt");
        }
    }

    /**
     * Chronicle cannot reach {@code index}: if a damaged header in its cycle is what stands in the way, the real
     * chain past the damage ({@link CycleResync}), searched from the nearest excerpt Chronicle's index places,
     * reaches it.
     */
    private boolean moveIntoDamagedCycle(long index) {
        if (lastIndexIn(rollCycle.toCycle(index)) < index || !resyncFromIndexed(index)) {
            return false;
        }
        int slot = recovered.slotOf(index);
        if (slot < 0) {
            recovered = null;
            return false;
        }
        recoveredSlot = slot;
        return true;
    }

    @Override
    public QueueTailer toStart() {
        try {
            moved();
            previousCycle = NO_CYCLE;
            recovered = null;
            failedIndex = -1;
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
            recovered = null;
            failedIndex = -1;
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
