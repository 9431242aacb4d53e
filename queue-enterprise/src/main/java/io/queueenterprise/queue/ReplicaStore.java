package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.bytes.PointerBytesStore;
import net.openhft.chronicle.core.values.LongValue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.single.InternalAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * <b>For the replication module only</b>: a queue directory opened WITHOUT keys, to move excerpts exactly as
 * stored (still sealed when the queue is encrypted). A node never holds a data key and never seals: it tails
 * raw excerpts on the leader and writes them at the same index on a follower
 * ({@link InternalAppender#writeBytes(long, net.openhft.chronicle.bytes.BytesStore)}, index must be the next one).
 *
 * <p>It also carries the marks through which a node tells the library processes that share the directory what
 * they may do ({@link #publishWritableTerm}, {@link #recordAckMode}, {@link #publishQuorumIndex}); they live in
 * Chronicle's metadata store ({@code metadata.cq4t}), mapped by every process, so a write here is seen by the
 * application's appenders and tailers with one volatile read.
 *
 * <p>Threads: {@link #writeAt} (a follower's writes) and {@link #lastIndex} may run on a thread of their own (the
 * node's writer for this queue), with their own appender, scratch bytes and storage budget; everything else is the
 * node's duty thread's, which also runs {@link #append} (a leader's remote clients). The marks are mapped values,
 * safe from either. The node never runs {@link #writeAt} and {@link #append} at the same time (one role at a time).
 */
public final class ReplicaStore implements AutoCloseable {
    /** Term under which library appenders may write here; &le; 0 when the node does not lead (replica, fenced). */
    static final String WRITABLE_TERM = "queue-enterprise.node.writable-term";
    /**
     * Until when ({@code System.nanoTime}, CLOCK_MONOTONIC: one clock for every process of the host) library appenders
     * may have a write acknowledged: the node's leader lease. {@link Long#MIN_VALUE}: not now; {@link Long#MAX_VALUE}
     * (also when absent): no lease lapses. Read by appenders before and after each write.
     */
    static final String LEASE_UNTIL = "queue-enterprise.node.lease-until";
    /** The ack mode the node replicates this queue with: {@link #ACK_ASYNC}, {@link #ACK_REPLICATED_READS}, {@link #ACK_QUORUM}. */
    static final String ACK_MODE = "queue-enterprise.node.ack-mode";
    /** Chronicle's own key for {@code lastAcknowledgedIndexReplicated} in the metadata store (2026.4). */
    static final String QUORUM_INDEX = "chronicle.lastAcknowledgedIndexReplicated";
    public static final long ACK_ASYNC = 0;
    public static final long ACK_REPLICATED_READS = 1;
    public static final long ACK_QUORUM = 2;

    private final Path dir;
    private final SingleChronicleQueue chronicle;
    private final LongValue writableTerm;
    private final LongValue leaseUntil;
    /** {@link #append}'s view of the caller's bytes (duty thread). */
    private final SourceView appendSource = new SourceView();
    private final StorageGuard storageGuard;
    private final StorageGuard.Budget storage;
    private final String queueName; // for errors, computed once: the write path allocates nothing
    private ExcerptAppender appender;
    /** {@link #writeAt}'s own: it may run on another thread than {@link #append}, and appenders are single-threaded. */
    private ExcerptAppender replicaAppender;
    /** {@link #writeAt}'s view of the caller's bytes (the queue's writer thread). */
    private final SourceView replicaSource = new SourceView();
    private final StorageGuard.Budget replicaStorage;
    /** One per appender: {@link #append} and {@link #writeAt} may run on different threads. */
    private final WrittenMarks.Writer marks;
    private final WrittenMarks.Writer replicaMarks;
    /** Excerpts {@link #writeAt} stored: raised after each is complete (release), read by the duty thread. */
    private final java.util.concurrent.atomic.AtomicLong replicaWrites = new java.util.concurrent.atomic.AtomicLong();
    /** What each of those writes was, for the writer sessions (filled before the count moves). */
    private final ReplicaWriteFeed replicaWriteFeed = new ReplicaWriteFeed();
    /** {@link #writeAt}'s copy of each write's first bytes (its envelope header), for the feed. */
    private final byte[] replicaHeader = new byte[io.queueenterprise.crypto.Envelope.HEADER_LENGTH];

    private ReplicaStore(Path dir, SingleChronicleQueue chronicle) {
        this.dir = dir;
        this.chronicle = chronicle;
        this.writableTerm = chronicle.metaStore().acquireValueFor(WRITABLE_TERM, Long.MIN_VALUE);
        this.leaseUntil = chronicle.metaStore().acquireValueFor(LEASE_UNTIL, Long.MAX_VALUE);
        // A follower's writes stop before its file system is full, as a library appender's do (StorageGuard).
        this.storageGuard = StorageGuard.start(dir, 2 * chronicle.blockSize());
        this.queueName = String.valueOf(dir.getFileName());
        this.storage = storageGuard.new Budget();
        this.replicaStorage = storageGuard.new Budget();
        this.marks = new WrittenMarks.Writer(chronicle);
        this.replicaMarks = new WrittenMarks.Writer(chronicle);
    }

    /**
     * Whether the file system has room again (as of the latest sample): a follower stopped by
     * {@link StorageFullException} resumes then. Room means the reserve plus one largest excerpt (Chronicle's
     * overlap, a quarter block) twice over, so that a follower does not flap between stopping and resuming.
     */
    public boolean hasRoomToWrite() {
        long largestExcerpt = chronicle.blockSize() / 4;
        return storageGuard.usableBytes() > storageGuard.reserveBytes() + 2 * largestExcerpt;
    }

    /**
     * Opens (creating if absent) the queue in {@code dir} without keys. A new directory gets no descriptor here:
     * a follower installs its leader's with {@link #installDescriptor}; it is marked a replica until the node leads.
     */
    public static ReplicaStore open(Path dir, RollCycle rollCycle) {
        ChronicleSettings.apply();
        Path queueDir = dir.toAbsolutePath().normalize();
        RequiredJvmFlags.check(queueDir.getFileName() == null ? queueDir.toString() : queueDir.getFileName().toString());
        try {
            Files.createDirectories(queueDir);
            if (!Files.exists(queueDir.resolve(QueueRole.FILE_NAME))) {
                // A node-hosted copy is a replica until the node is promoted: library readers opened before the
                // leader's descriptor arrives are then refused instead of creating a descriptor of their own.
                QueueRole.markReplica(queueDir);
            }
            return new ReplicaStore(queueDir, SingleChronicleQueueBuilder.single(queueDir.toFile()).rollCycle(rollCycle).build());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create queue directory " + queueDir, e);
        } catch (RuntimeException e) { // Chronicle throws StreamCorruptedException undeclared
            throw new CorruptedQueueException(queueDir.toString(), ExcerptException.UNKNOWN_INDEX,
                    "cannot open the Chronicle queue in " + queueDir + ": " + e, e);
        }
    }

    public Path path() {
        return dir;
    }

    public RollCycle rollCycle() {
        return chronicle.rollCycle();
    }

    /**
     * The largest excerpt this queue stores in one piece: Chronicle's overlap size, a quarter of the block size
     * (as {@code EnterpriseQueue.maxExcerptLength()}). A follower assembling a larger one refuses it.
     */
    public long maxExcerptLength() {
        return chronicle.overlapSize();
    }

    /** Last index held, -1 when empty. Scans the last cycle (Chronicle's cost): not for every excerpt. */
    public long lastIndex() {
        return chronicle.lastIndex();
    }

    /** First index held, -1 when empty. */
    public long firstIndex() {
        long first = chronicle.firstIndex();
        return first == Long.MAX_VALUE ? -1 : first;
    }

    /** The descriptor file's exact bytes, or null when the directory has none (a plain open-source queue, or new). */
    public byte[] descriptorBytes() {
        Path file = dir.resolve(QueueDescriptor.FILE_NAME);
        try {
            return Files.exists(file) ? Files.readAllBytes(file) : null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    /**
     * Installs the leader's descriptor (received over an authenticated session) unchanged, so that readers with
     * the keys verify it exactly as on the leader, and pins the same identity beside the cycle files. The bytes
     * must parse as a descriptor; a directory that already holds another incarnation refuses it.
     *
     * @throws QueueConfigurationException UNREADABLE_DESCRIPTOR or IDENTITY_MISMATCH; nothing written then
     */
    public void installDescriptor(byte[] bytes) {
        QueueDescriptor offered = QueueDescriptor.parse(dir.toString(), new String(bytes, StandardCharsets.UTF_8));
        QueueDescriptor current = QueueDescriptor.read(dir);
        if (current != null && !java.util.Arrays.equals(current.incarnationId(), offered.incarnationId())) {
            throw new QueueConfigurationException(offered.name(), QueueConfigurationException.Problem.IDENTITY_MISMATCH,
                    dir + " holds another incarnation of queue '" + current.name() + "' than the leader's");
        }
        if (offered.encrypted()) {
            IdentityPin.check(chronicle, offered, false, dir);
        }
        QueueDescriptor.replaceWith(dir, bytes);
    }

    // ------------------------------------------------------------------------------------------ leader: raw tail

    /** A tailer over the raw (still sealed) excerpts, for the thread that owns this store. */
    public RawTailer rawTailer() {
        return new RawTailer(chronicle.createTailer());
    }

    /** Reads excerpts exactly as stored, with their index, into a reusable array. */
    public static final class RawTailer implements AutoCloseable {
        private final ExcerptTailer tailer;
        private byte[] bytes = new byte[4096];
        private int length;
        private long index = -1;

        private RawTailer(ExcerptTailer tailer) {
            this.tailer = tailer;
        }

        /** Positions before the first excerpt held. */
        public void toStart() {
            tailer.toStart();
        }

        /**
         * Positions right after {@code index} so the next read returns the excerpt that follows it.
         *
         * @return false when {@code index} is not held (before the first index, or not written)
         */
        public boolean moveAfter(long index) {
            if (!tailer.moveToIndex(index)) {
                return false;
            }
            try (DocumentContext dc = tailer.readingDocument()) {
                return dc.isPresent() && dc.index() == index;
            }
        }

        /**
         * Positions at {@code index} so the next read returns that excerpt.
         *
         * @return false when {@code index} is not held (before the first index, or not written)
         */
        public boolean moveTo(long index) {
            return tailer.moveToIndex(index);
        }

        /**
         * Reads the next excerpt into {@link #bytes()} (grown when needed, never in steady state).
         *
         * @return its length, or -1 when there is none yet
         */
        public int next() {
            try (DocumentContext dc = tailer.readingDocument()) {
                if (!dc.isPresent()) {
                    return -1;
                }
                Bytes<?> excerpt = dc.wire().bytes();
                long remaining = excerpt.readRemaining();
                if (remaining > Integer.MAX_VALUE - 64) {
                    throw new IllegalStateException("excerpt at 0x" + Long.toHexString(dc.index()) + " has impossible length " + remaining);
                }
                int n = (int) remaining;
                if (bytes.length < n) {
                    bytes = new byte[Math.max(n, bytes.length * 2)];
                }
                excerpt.read(bytes, 0, n);
                length = n;
                index = dc.index();
                return n;
            }
        }

        /** Moves past the next excerpt without copying it; returns its index, or -1 when there is none yet. */
        public long skipNext() {
            try (DocumentContext dc = tailer.readingDocument()) {
                if (!dc.isPresent()) {
                    return -1;
                }
                index = dc.index();
                length = 0;
                return index;
            }
        }

        /** Puts back the excerpt last returned by {@link #next()}, so the next call returns it again. */
        public void unread() {
            tailer.moveToIndex(index);
        }

        public byte[] bytes() {
            return bytes;
        }

        public int length() {
            return length;
        }

        /** Index of the excerpt last returned by {@link #next()}. */
        public long index() {
            return index;
        }

        @Override
        public void close() {
            tailer.close();
        }
    }

    // ------------------------------------------------------------------------------------------ follower: raw write

    /**
     * Writes {@code src[offset, offset+length)} as the excerpt at {@code index}, which must be the next one (the
     * same cycle's next sequence, or sequence 0 of a later cycle; any index for an empty queue is up to Chronicle).
     *
     * @throws IllegalStateException if Chronicle did not store it at exactly that index
     * @throws StorageFullException if the file system is nearly full (nothing written)
     */
    public void writeAt(long index, byte[] src, int offset, int length) {
        System.arraycopy(src, offset, replicaHeader, 0, Math.min(length, replicaHeader.length));
        writeAt(index, replicaSource.of(src, offset, length), length);
    }

    /**
     * As {@link #writeAt(long, byte[], int, int)}, from native memory {@code [address, address+length)} that the
     * caller keeps unchanged until this returns (a follower's hand-off ring): Chronicle copies it straight into the
     * mapped cycle file, the one copy this write makes.
     */
    public void writeAt(long index, long address, int length) {
        BytesStore<?, ?> source = replicaSource.of(address, length);
        source.read(0, replicaHeader, 0, Math.min(length, replicaHeader.length));
        writeAt(index, source, length);
    }

    private void writeAt(long index, BytesStore<?, ?> source, int length) {
        if (replicaAppender == null) {
            replicaAppender = chronicle.createAppender(); // can wait out a stalled or dead writer's lock: seconds
        }
        replicaStorage.spend(queueName, length); // StorageFullException: nothing written
        long n = replicaWrites.get(); // one writing thread: no read-modify-write race
        long written;
        try {
            ((InternalAppender) replicaAppender).writeBytes(index, source);
            written = replicaAppender.lastIndexAppended();
        } catch (RuntimeException | Error e) {
            writeUnknown(n);
            throw e;
        }
        if (written != index) { // Chronicle ignores an index below its end: never let that pass silently
            writeUnknown(n);
            throw new IllegalStateException("excerpt for index 0x" + Long.toHexString(index)
                    + " was not written there (last written 0x" + Long.toHexString(written) + ")");
        }
        replicaMarks.written(index);
        replicaWriteFeed.add(n, index, replicaHeader, length);
        replicaWrites.lazySet(n + 1); // after the excerpt and its feed slot (release)
    }

    /** Write {@code n} failed: what (if anything) it left is unknown, so the writer sessions read the queue itself from here. */
    private void writeUnknown(long n) {
        replicaWriteFeed.unknown(n);
        replicaWrites.lazySet(n + 1);
    }

    /** What the latest replicated writes were ({@link #replicaWrites} numbers them from 0). */
    public ReplicaWriteFeed replicaWriteFeed() {
        return replicaWriteFeed;
    }

    /**
     * How many excerpts {@link #writeAt} has stored (or failed to store) through this store (replicated ones: a
     * follower's, or a quarantine copy's), raised only once each is complete or has failed. A reader that noted this count before reading the queue to its end
     * and sees it unchanged later knows that no excerpt arrived that way since.
     */
    public long replicaWrites() {
        return replicaWrites.get();
    }

    /**
     * Leader: appends {@code src[offset, offset+length)} as the next excerpt exactly as given (a remote client's
     * sealed envelope; the node never seals) and returns its index. For the thread that owns this store.
     *
     * @throws StorageFullException if the file system is nearly full (nothing written)
     */
    public long append(byte[] src, int offset, int length) {
        return append(appendSource.of(src, offset, length), length);
    }

    /**
     * As {@link #append(byte[], int, int)}, from native memory {@code [address, address+length)} that the caller keeps
     * unchanged until this returns (a client frame in Aeron's term buffer): one copy, into the mapped cycle file.
     */
    public long append(long address, int length) {
        return append(appendSource.of(address, length), length);
    }

    private long append(BytesStore<?, ?> source, int length) {
        if (appender == null) {
            appender = chronicle.createAppender();
        }
        storage.spend(queueName, length); // StorageFullException: nothing written
        appender.writeBytes(source);
        long index = appender.lastIndexAppended();
        marks.written(index);
        return index;
    }

    /**
     * The highest index recorded as completed in this directory, by this store or a library appender ({@link
     * WrittenMarks}), or -1. Read it BEFORE reading the queue to its end: everything up to it was complete then.
     */
    public long highWaterMark() {
        long recorded = chronicle.tableStoreGet(WrittenMarks.HIGH_WATER_KEY);
        return recorded == Long.MIN_VALUE ? -1 : recorded;
    }

    /**
     * The cycle files, logged as written ({@value WrittenMarks#CYCLE_LOG}), that are gone from between the cycles of
     * {@code fromIndex} and {@code toIndex} (both excluded); empty when none is.
     */
    public java.util.List<String> missingCycleFilesBetween(long fromIndex, long toIndex) {
        RollCycle cycles = chronicle.rollCycle();
        int from = cycles.toCycle(fromIndex);
        int to = cycles.toCycle(toIndex);
        java.util.List<String> missing = new java.util.ArrayList<>();
        if (to > from + 1) {
            for (int cycle : WrittenMarks.loggedCycles(dir)) {
                String file = CorruptedQueueException.cycleFile(chronicle, cycles.toIndex(cycle, 0));
                if (cycle > from && cycle < to && !Files.exists(Path.of(file))) {
                    missing.add(file);
                }
            }
        }
        return missing;
    }

    /** Whether {@code index} may follow {@code last} with no gap: next sequence in the cycle, or 0 of a later cycle. */
    public static boolean isNext(RollCycle cycle, long last, long index) {
        if (last < 0) {
            return index >= 0;
        }
        int lastCycle = cycle.toCycle(last);
        int nextCycle = cycle.toCycle(index);
        if (nextCycle == lastCycle) {
            return cycle.toSequenceNumber(index) == cycle.toSequenceNumber(last) + 1;
        }
        return nextCycle > lastCycle && cycle.toSequenceNumber(index) == 0;
    }

    // ------------------------------------------------------------------------------------------ marks for the library

    /**
     * Lets library appenders in this directory write under {@code term} (leader), or stops them ({@code term} &le; 0:
     * follower, fenced, standby): appenders check it before each write.
     */
    public void publishWritableTerm(long term) {
        writableTerm.setVolatileValue(term);
    }

    /**
     * Until when library appenders may have a write acknowledged, on {@code System.nanoTime}'s clock (the node's leader
     * lease): {@link Long#MIN_VALUE} stops them at once, {@link Long#MAX_VALUE} never lapses. Appenders check it
     * before a write (refused, nothing written) and, unless they wait for a quorum, after it (written, not
     * acknowledged); so a node stopped (SIGSTOP, a long pause) cannot leave them acknowledging past it.
     */
    public void publishLeaseUntil(long nanos) {
        leaseUntil.setVolatileValue(nanos);
    }

    /** Records the ack mode the node replicates this queue with; library queues opened here check theirs against it. */
    public void recordAckMode(long mode) {
        chronicle.tableStorePut(ACK_MODE, mode);
    }

    /**
     * Publishes the highest index a majority of replicas holds (Chronicle's {@code lastAcknowledgedIndexReplicated},
     * shared by mmap): quorum-mode appenders wait for it, replicated-reads tailers stop before it. Never moves back.
     */
    public void publishQuorumIndex(long index) {
        chronicle.lastAcknowledgedIndexReplicated(index);
    }

    public long quorumIndex() {
        return chronicle.lastAcknowledgedIndexReplicated();
    }

    /** Records the role in {@code queue-enterprise.role}: "leader term" (only above any recorded term) for a leader. */
    public void recordLeader(String queueName, long term) {
        QueueRole role = QueueRole.open(dir, queueName, false, false);
        if (role.isReplica() || role.leaderTerm() < term) {
            role.promote(queueName, term);
        }
    }

    /** Records "replica" in {@code queue-enterprise.role}: no library appender until the node leads again. */
    public void recordReplica() {
        QueueRole.markReplica(dir);
    }

    @Override
    public void close() {
        storageGuard.close();
        if (appender != null) {
            appender.close();
        }
        if (replicaAppender != null) {
            replicaAppender.singleThreadedCheckReset(); // created on the node's writer thread, which has stopped
            replicaAppender.close();
        }
        appendSource.release();
        replicaSource.release();
        chronicle.close();
    }

    /**
     * The caller's bytes as Chronicle's source of one write, without copying them first (a scratch copy was one copy
     * too many: Chronicle copies the source into the mapped file anyway). Native memory through one reused pointer;
     * an array through a read view made once per array (callers reuse theirs), so steady writes allocate nothing.
     * One per thread: {@link #append} and {@link #writeAt} may run on different threads.
     */
    private static final class SourceView {
        private final PointerBytesStore pointer = BytesStore.nativePointer();

        SourceView() {
            pointer.singleThreadedCheckDisabled(true); // the store moves between threads (see the class comment)
        }
        private byte[] array;
        private Bytes<byte[]> arrayView;

        BytesStore<?, ?> of(long address, int length) {
            pointer.set(address, length);
            return pointer;
        }

        BytesStore<?, ?> of(byte[] src, int offset, int length) {
            if (src != array) {
                arrayView = Bytes.wrapForRead(src);
                arrayView.singleThreadedCheckDisabled(true); // the store moves between threads (see the class comment)
                array = src;
            }
            arrayView.readPositionRemaining(offset, length);
            return arrayView;
        }

        void release() {
            pointer.releaseLast();
            array = null;
            arrayView = null;
        }
    }
}
