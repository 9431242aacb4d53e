package io.queueenterprise.queue;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.KeyRingSource;
import io.queueenterprise.crypto.WriterEpochs;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * A persisted, memory-mapped queue: an ordinary Chronicle Queue whose excerpts are, when the queue
 * is encrypted, sealed envelopes (salted AES-128 per excerpt, see the {@code crypto} module).
 * Indexes and roll cycles are Chronicle's own, untouched, so a copy of the excerpts at the same
 * indexes (what replication does) reads back with the key.
 *
 * <pre>{@code
 * try (EnterpriseQueue queue = EnterpriseQueue.builder(Path.of("/data/orders"))
 *         .encrypted(Path.of("/etc/queue-keys"))      // a mounted Kubernetes Secret
 *         .build();
 *      QueueAppender appender = queue.createAppender();
 *      QueueTailer tailer = queue.createTailer()) {
 *     appender.write("hello".getBytes(UTF_8));
 *     byte[] buffer = new byte[1024];
 *     int length = tailer.read(buffer);               // -1: nothing to read yet
 * }
 * }</pre>
 *
 * <p>Thread-safe. Appenders and tailers are not: one per thread.
 */
public final class EnterpriseQueue implements AutoCloseable {
    static {
        // Before the Builder's defaults load the first Chronicle classes (its start-up banner).
        ChronicleSettings.apply();
    }

    /** The default for new encrypted queues: authenticated, tampering is detected (docs/crypto.md). */
    public static final CipherMode DEFAULT_CIPHER_MODE = CipherMode.AES_128_CTR_POLY1305;

    private final Path path;
    private final SingleChronicleQueue chronicle;
    private final QueueDescriptor descriptor;
    private final QueueKeys keys; // null for a plain queue
    private final CryptoEngine engine;
    private final QueueRole role;
    private final LastIndexWatch lastIndexWatch;
    /** What this queue recorded as written outside its cycle files, for its tailers ({@link WrittenMarks}). */
    private final WrittenMarks.Reader written;
    /** Quorum acks asked for in code ({@link Builder#quorumAcks}); null otherwise. */
    private final Duration quorumAckTimeout;
    /** Refuses appends before the file system is full; null for a read-only queue. */
    private final StorageGuard storageGuard;

    private EnterpriseQueue(Path path, SingleChronicleQueue chronicle, QueueDescriptor descriptor,
                            QueueKeys keys, CryptoEngine engine, QueueRole role, Duration quorumAckTimeout,
                            StorageGuard storageGuard, WrittenMarks.CutFiles cutFiles) {
        this.path = path;
        this.storageGuard = storageGuard;
        this.quorumAckTimeout = quorumAckTimeout;
        this.chronicle = chronicle;
        this.descriptor = descriptor;
        this.keys = keys;
        this.engine = engine;
        this.role = role;
        this.lastIndexWatch = new LastIndexWatch(chronicle);
        this.written = new WrittenMarks.Reader(chronicle, storageGuard == null, cutFiles);
    }

    /** Starts building a queue stored in directory {@code dir} (created if absent). */
    public static Builder builder(Path dir) {
        return new Builder(dir);
    }

    /**
     * A new appender, owned by the calling thread until closed. Each appender of an encrypted queue is a
     * writer session with its own writer epoch. On a queue a replication node replicates in QUORUM mode each write
     * returns only once a majority of replicas holds the excerpt (see {@link Builder#quorumAcks}); for writes that
     * return at once and are acknowledged later, see {@link #createPipelinedAppender()}.
     *
     * @throws QueueConfigurationException REPLICA_CANNOT_WRITE on a replica that was not promoted
     * @throws QueueStateException on a queue opened read-only or closed
     */
    public QueueAppender createAppender() {
        return createAppender(true);
    }

    /**
     * A new appender whose writes return their index as soon as the excerpt is in this queue, in every ack mode:
     * on a queue a node replicates in QUORUM (or REPLICATED_READS) mode, the application follows what a majority
     * holds through {@link #acknowledgements()} and keeps several writes in flight meanwhile (docs/library.md,
     * "Pipelined appends"). Otherwise the same as {@link #createAppender()}, and so is everything it checks.
     */
    public QueueAppender createPipelinedAppender() {
        return createAppender(false);
    }

    private QueueAppender createAppender(boolean waitForQuorum) {
        checkOpen("cannot create an appender");
        if (storageGuard == null) { // before Chronicle makes an appender of a read-only queue
            throw new QueueStateException(name(), "cannot create an appender: the queue in " + path
                    + " was opened read-only", null);
        }
        long nodeAckMode = chronicle.tableStoreGet(ReplicaStore.ACK_MODE);
        boolean nodeHosted = nodeAckMode != Long.MIN_VALUE;
        checkAckMode(nodeAckMode);
        if (nodeHosted) {
            // The node's mark is the live truth (it changes while this queue is open); the role file is its record.
            if (chronicle.tableStoreGet(ReplicaStore.WRITABLE_TERM) <= 0) {
                throw new QueueConfigurationException(name(), QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE,
                        "the replication node hosting " + path + " does not lead this queue now (follower, fenced or standby)");
            }
        } else if (role.isReplica()) {
            throw new QueueConfigurationException(name(), QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE,
                    "this queue in " + path + " is a replica; it takes no appends until promote(term) makes it the leader");
        }
        ExcerptAppender appender;
        try {
            appender = chronicle.createAppender();
        } catch (Exception | InternalError | AssertionError e) { // Chronicle throws StreamCorruptedException undeclared
            throw failure("cannot create an appender", e);
        }
        StorageGuard.Budget budget = storageGuard.new Budget();
        WrittenMarks.Writer marks = new WrittenMarks.Writer(chronicle);
        QueueAppender local = keys == null ? new PlainAppender(name(), appender, maxExcerptLength(), budget, marks)
                : new EncryptedAppender(name(), appender, keys, keys.newSealer(engine, WriterEpochs.random()), maxExcerptLength(), budget, marks);
        if (!nodeHosted) {
            return new CheckedAppender(name(), local, chronicle);
        }
        boolean waits = waitForQuorum && nodeAckMode == ReplicaStore.ACK_QUORUM;
        return new CheckedAppender(name(), new NodeGuardedAppender(name(), local,
                chronicle.metaStore().acquireValueFor(ReplicaStore.WRITABLE_TERM, Long.MIN_VALUE),
                chronicle.metaStore().acquireValueFor(ReplicaStore.LEASE_UNTIL, Long.MAX_VALUE),
                waits ? newAcknowledgements() : null, waits ? quorumAckTimeout : null), chronicle);
    }

    /**
     * What a majority of replicas holds of this queue (the acknowledged index, a watermark), for a queue a
     * replication node replicates in QUORUM or REPLICATED_READS mode: readable and awaitable from any thread.
     * Make it once and keep it; see {@link QueueAcknowledgements}.
     *
     * @throws QueueConfigurationException ACK_MODE_MISMATCH on a queue no node replicates in either mode (nothing
     *                                     would ever acknowledge)
     * @throws QueueStateException on a closed queue
     */
    public QueueAcknowledgements acknowledgements() {
        checkOpen("cannot follow acknowledgements");
        long nodeAckMode = chronicle.tableStoreGet(ReplicaStore.ACK_MODE);
        if (nodeAckMode != ReplicaStore.ACK_QUORUM && nodeAckMode != ReplicaStore.ACK_REPLICATED_READS) {
            throw new QueueConfigurationException(name(), QueueConfigurationException.Problem.ACK_MODE_MISMATCH,
                    "no replication node acknowledges " + path + " (acknowledgements are published in QUORUM and"
                            + " REPLICATED_READS modes; " + (nodeAckMode == Long.MIN_VALUE ? "no node hosts it)" : "its node replicates it ASYNC)"));
        }
        return newAcknowledgements();
    }

    /**
     * Read from the metadata store directly (as the tailers' gate): Chronicle's own
     * {@code lastAcknowledgedIndexReplicated()} answers -1 forever on a queue opened read-only.
     */
    private QueueAcknowledgements newAcknowledgements() {
        return new QueueAcknowledgements(name(), chronicle.metaStore().acquireValueFor(ReplicaStore.QUORUM_INDEX, -1));
    }

    /** Refuses any use of a closed queue but its names (Chronicle would throw its own exception, or answer wrongly). */
    private void checkOpen(String what) {
        if (chronicle.isClosed()) {
            throw new QueueStateException(name(), what + ": the queue in " + path + " is closed", null);
        }
    }

    /**
     * An application that asked for quorum acks must be on a queue a node replicates in quorum mode (else nothing
     * would ever acknowledge), and one on such a queue must have asked (else it would believe unacknowledged
     * writes durable).
     */
    private void checkAckMode(long nodeAckMode) {
        boolean nodeQuorum = nodeAckMode == ReplicaStore.ACK_QUORUM;
        if (nodeQuorum != (quorumAckTimeout != null)) {
            throw new QueueConfigurationException(name(), QueueConfigurationException.Problem.ACK_MODE_MISMATCH,
                    nodeQuorum ? "the replication node replicates " + path + " in QUORUM mode: open it with"
                            + " .quorumAcks(timeout) so that appends wait for a majority"
                            : ".quorumAcks(" + quorumAckTimeout + ") was asked for but no replication node replicates "
                            + path + " in QUORUM mode" + (nodeAckMode == Long.MIN_VALUE ? " (no node hosts it)" : ""));
        }
    }

    /**
     * A gate for tailers: on a node-hosted queue in REPLICATED_READS or QUORUM mode, the quorum index (only what a
     * majority holds is read); null otherwise. Read from the metadata store directly: Chronicle's own
     * {@code lastAcknowledgedIndexReplicated()} answers -1 forever on a queue opened read-only.
     */
    private net.openhft.chronicle.core.values.LongValue replicatedReadsGate() {
        long nodeAckMode = chronicle.tableStoreGet(ReplicaStore.ACK_MODE);
        if (nodeAckMode != ReplicaStore.ACK_REPLICATED_READS && nodeAckMode != ReplicaStore.ACK_QUORUM) {
            return null;
        }
        return chronicle.metaStore().acquireValueFor(ReplicaStore.QUORUM_INDEX, -1);
    }

    /**
     * A new tailer at the start of the queue, owned by the calling thread until closed.
     *
     * @throws QueueStateException on a closed queue
     * @throws CorruptedQueueException when Chronicle cannot read the queue's files
     */
    public QueueTailer createTailer() {
        checkOpen("cannot create a tailer");
        ExcerptTailer tailer;
        try {
            tailer = chronicle.createTailer();
        } catch (Exception | InternalError | AssertionError e) { // Chronicle throws StreamCorruptedException undeclared
            throw failure("cannot create a tailer", e);
        }
        AbstractTailer local = keys == null ? new PlainTailer(name(), tailer, lastIndexWatch, replicatedReadsGate(), written)
                : new EncryptedTailer(name(), tailer, lastIndexWatch, keys.newOpener(engine), replicatedReadsGate(), written);
        return new CheckedTailer(name(), local, chronicle);
    }

    /** What Chronicle threw, as a typed error: closed or read-only is a state error, anything else damage. */
    private QueueException failure(String what, Throwable e) {
        if (e instanceof QueueException || chronicle.isClosed()
                || e instanceof net.openhft.chronicle.core.io.ClosedIllegalStateException
                || e instanceof UnsupportedOperationException) {
            return ChronicleFailures.classify(name(), chronicle, "queue", e, ExcerptException.UNKNOWN_INDEX, what);
        }
        return new CorruptedQueueException(name(), ExcerptException.UNKNOWN_INDEX, what + " on " + path + ": " + e, e);
    }

    /** The queue's logical name (recorded in its descriptor; the directory name by default). */
    public String name() {
        return descriptor.name();
    }

    public Path path() {
        return path;
    }

    public boolean encrypted() {
        return keys != null;
    }

    public QueueDescriptor descriptor() {
        return keys == null ? descriptor : keys.descriptor();
    }

    public RollCycle rollCycle() {
        return chronicle.rollCycle();
    }

    /** Index of the first excerpt, or {@link Long#MAX_VALUE} when empty (Chronicle's convention). */
    public long firstIndex() {
        checkOpen("cannot tell the first index");
        try {
            return chronicle.firstIndex();
        } catch (RuntimeException | InternalError | AssertionError e) {
            throw failure("cannot tell the first index", e);
        }
    }

    /** Index of the last excerpt, or -1 when empty. */
    public long lastIndex() {
        checkOpen("cannot tell the last index");
        try {
            return chronicle.lastIndex();
        } catch (RuntimeException | InternalError | AssertionError e) {
            throw failure("cannot tell the last index", e);
        }
    }

    /**
     * The underlying Chronicle queue, for code that moves excerpts without opening them
     * (replication ships sealed bytes as they are). Writing through it bypasses encryption.
     */
    public ChronicleQueue chronicleQueue() {
        return chronicle;
    }

    /**
     * The largest excerpt Chronicle stores in one piece: the queue's overlap size, a quarter of the block
     * size (16 MiB by default). An encrypted queue takes plaintexts smaller by the envelope's overhead.
     */
    public long maxExcerptLength() {
        return chronicle.overlapSize();
    }

    /** The key id new excerpts are sealed with once the next write happens (after any reload); -1 for a plain queue. */
    public int activeKeyId() {
        return keys == null ? -1 : keys.get().activeKeyId();
    }

    /**
     * Rebuilds the lost descriptor of an encrypted queue from what the queue itself still holds: its identity
     * (the incarnation id pinned beside the cycle files) plus the name, mode and keys the caller supplies,
     * proven right by authenticating the queue's first excerpt with them. Writes an authenticated descriptor;
     * refuses when anything does not fit, and for {@code AES_128_CTR} queues, whose excerpts cannot prove a guess.
     *
     * @return the recovered descriptor
     */
    public static QueueDescriptor recoverDescriptor(Path dir, String name, CipherMode mode, KeyRing ring) {
        Path queueDir = dir.toAbsolutePath().normalize();
        ChronicleSettings.apply();
        if (QueueDescriptor.read(queueDir) != null) {
            throw new QueueConfigurationException(name, QueueConfigurationException.Problem.DESCRIPTOR_PRESENT,
                    queueDir + " has a descriptor; there is nothing to recover");
        }
        byte[] incarnation = IdentityPin.pinnedIncarnation(queueDir);
        if (incarnation == null) {
            throw new QueueConfigurationException(name, QueueConfigurationException.Problem.DESCRIPTOR_MISSING,
                    queueDir + " has no pinned queue identity (not an encrypted queue of this library): nothing to recover from");
        }
        if (!mode.authenticated()) {
            throw new QueueConfigurationException(name, QueueConfigurationException.Problem.CIPHER_MODE_MISMATCH,
                    mode + " excerpts cannot prove a name or key right: restore the descriptor from a backup");
        }
        QueueDescriptor candidate = QueueDescriptor.recovered(name, mode, incarnation);
        DescriptorRecovery.proveOnFirstExcerpt(queueDir, candidate, ring);
        try (QueueKeys keys = QueueKeys.open(queueDir, name, null, mode, candidate, false, ring, null,
                KeyRingSource.PermissionPolicy.WARN, false, null)) {
            return keys.descriptor();
        }
    }

    /** Whether this queue is a replica that takes no appends (see {@link #promote(long)}). */
    public boolean isReplica() {
        return role.isReplica();
    }

    /** The leadership term this queue was last promoted under, 0 if never. */
    public long leaderTerm() {
        return role.leaderTerm();
    }

    /**
     * Makes a replica (or a leader of an older term) the leader under {@code term}: appenders can be created from
     * now on. The term is recorded in the queue directory before it takes effect and must be higher than any term
     * this directory was promoted under. The term fences; it does not number nonces: appenders seal with random
     * writer epochs as on any queue, so a term used twice (the role file edited back, a restored snapshot, two
     * replicas promoted under one term) repeats no nonce (docs/crypto.md, "Nonces").
     *
     * @throws QueueConfigurationException if the term is not above the recorded one
     * @throws QueueStateException on a queue opened read-only or closed
     */
    public void promote(long term) {
        if (term < 1 || term > WriterEpochs.MAX_TERM) {
            throw new IllegalArgumentException("term " + term + " outside 1.." + WriterEpochs.MAX_TERM);
        }
        checkOpen("cannot promote");
        if (storageGuard == null) {
            throw new QueueStateException(name(), "cannot promote: the queue in " + path + " was opened read-only", null);
        }
        role.promote(name(), term);
    }

    /**
     * Reloads the key ring from its directory (key rotation without downtime): new appends use the
     * new active key, old excerpts stay readable with the keys still in the ring. A ring whose key
     * does not match a fingerprint the queue recorded is refused and the current ring is kept.
     *
     * @return true if a changed ring was installed
     */
    public boolean reloadKeys() {
        checkOpen("cannot reload keys");
        if (keys == null) {
            throw new QueueConfigurationException(name(), QueueConfigurationException.Problem.ENCRYPTED_QUEUE_WITHOUT_KEYS,
                    "this queue is plain; there are no keys to reload");
        }
        return keys.reload();
    }

    @Override
    public void close() {
        try {
            lastIndexWatch.close();
            if (storageGuard != null) {
                storageGuard.close();
            }
            if (keys != null) {
                keys.close();
            }
        } finally {
            chronicle.close();
        }
    }

    @Override
    public String toString() {
        return "EnterpriseQueue[" + descriptor() + ", path=" + path + "]";
    }

    /** Options of a queue; {@link #build()} opens it. */
    public static final class Builder {
        private final Path dir;
        private String name;
        private RollCycle rollCycle = RollCycles.FAST_DAILY;
        private Long blockSize;
        private KeyRing keyRing;
        private Path keyDirectory;
        private CipherMode cipherMode;
        private CryptoEngine engine = CryptoEngine.JCE;
        private Duration keyReloadInterval;
        private KeyRingSource.PermissionPolicy keyFilePolicy = KeyRingSource.PermissionPolicy.WARN;
        private boolean readOnly;
        private QueueDescriptor replicaOf;
        private Duration quorumAckTimeout;
        private Long minFreeSpace;
        /** Tests only: the clock that picks the cycle a write lands in (several cycles without waiting days). */
        private net.openhft.chronicle.core.time.TimeProvider timeProvider;

        private Builder(Path dir) {
            this.dir = Objects.requireNonNull(dir, "dir").toAbsolutePath().normalize();
        }

        /** Tests only: the clock that decides each write's roll cycle. */
        Builder timeProvider(net.openhft.chronicle.core.time.TimeProvider clock) {
            this.timeProvider = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Logical name recorded when the queue is created (default: the directory's name). */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        public Builder rollCycle(RollCycle rollCycle) {
            this.rollCycle = Objects.requireNonNull(rollCycle, "rollCycle");
            return this;
        }

        /** Size of each memory-mapped chunk; the largest excerpt is about a quarter of it. */
        public Builder blockSize(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("blockSize must be positive: " + bytes);
            }
            this.blockSize = bytes;
            return this;
        }

        /** A plain queue (the default): excerpts are stored as written, readable by open-source Chronicle. */
        public Builder plain() {
            this.keyRing = null;
            this.keyDirectory = null;
            return this;
        }

        /** Encrypted with the keys of this ring (fixed for the queue's lifetime). */
        public Builder encrypted(KeyRing ring) {
            this.keyRing = Objects.requireNonNull(ring, "ring");
            this.keyDirectory = null;
            return this;
        }

        /**
         * Encrypted with keys loaded from a directory in the form a mounted Kubernetes Secret takes
         * ({@code <id>.key} files and an {@code active} file; see docs/crypto.md). Keys are never
         * taken from command-line arguments.
         */
        public Builder encrypted(Path keyDirectory) {
            this.keyDirectory = Objects.requireNonNull(keyDirectory, "keyDirectory");
            this.keyRing = null;
            return this;
        }

        /** Cipher mode for a new encrypted queue; an existing queue must match. Default {@link #DEFAULT_CIPHER_MODE}. */
        public Builder cipherMode(CipherMode mode) {
            this.cipherMode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** AES engine on the hot path; default JCE (AES-NI intrinsics). */
        public Builder cryptoEngine(CryptoEngine engine) {
            this.engine = Objects.requireNonNull(engine, "engine");
            return this;
        }

        /**
         * What to do with key files readable by group or others, or key folders writable by others: warn (the
         * default) or refuse to open. Production deployments should refuse (Secrets with defaultMode 0400).
         */
        public Builder keyFilePermissions(KeyRingSource.PermissionPolicy policy) {
            this.keyFilePolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** Poll the key directory at this interval and install a rotated ring (off by default; see {@link #reloadKeys()}). */
        public Builder keyReloadInterval(Duration interval) {
            this.keyReloadInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /** Open without writing anything to the directory. */
        public Builder readOnly(boolean readOnly) {
            this.readOnly = readOnly;
            return this;
        }

        /**
         * Create this queue as a replica of another: same name, encryption and incarnation id, so
         * the same keys open the same sealed excerpts at the same indexes. An encrypted leader's descriptor must be
         * authentic under these keys ({@code DESCRIPTOR_NOT_AUTHENTIC} otherwise), and its mode must be the one this
         * builder asks for: a leader in {@code AES_128_CTR} needs {@code cipherMode(AES_128_CTR)} here too
         * ({@code CIPHER_MODE_MISMATCH} otherwise). Nothing is written when either is refused.
         */
        public Builder replicaOf(QueueDescriptor leaderDescriptor) {
            this.replicaOf = Objects.requireNonNull(leaderDescriptor, "leaderDescriptor");
            return this;
        }

        /**
         * For a queue that a replication node replicates in QUORUM mode: every append returns only once a
         * majority of replicas (this leader included) holds the excerpt, else throws {@link AckTimeoutException}
         * after {@code timeout} (the excerpt stays written locally and may still become durable). Required on such
         * a queue and refused on any other ({@code ACK_MODE_MISMATCH} at {@code createAppender()}).
         */
        public Builder quorumAcks(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("quorum ack timeout must be positive: " + timeout);
            }
            this.quorumAckTimeout = timeout;
            return this;
        }

        /**
         * Free space (bytes) the queue's file system keeps: an append that would leave less is refused with
         * {@link StorageFullException} and writes nothing. Default: twice Chronicle's block size (128 MiB with the
         * default blocks). It must cover what other processes write to that file system in
         * {@value StorageGuard#SAMPLE_MILLIS} ms.
         */
        public Builder minFreeSpace(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("minFreeSpace must be >= 0 bytes: " + bytes);
            }
            this.minFreeSpace = bytes;
            return this;
        }

        public EnterpriseQueue build() {
            // Again per queue: the application may have cleared the property since this class loaded.
            ChronicleSettings.apply();
            boolean wantEncrypted = keyRing != null || keyDirectory != null;
            String label = name != null ? name : replicaOf != null ? replicaOf.name()
                    : dir.getFileName() == null ? dir.toString() : dir.getFileName().toString();
            RequiredJvmFlags.check(label);
            QueueKeys keys = null;
            QueueDescriptor descriptor;
            QueueDescriptor existing = QueueDescriptor.read(dir);
            if (existing == null && hasCycleFiles(dir) && IdentityPin.pinnedIncarnation(dir) != null) {
                throw new QueueConfigurationException(label, QueueConfigurationException.Problem.DESCRIPTOR_MISSING,
                        dir + " holds an encrypted queue whose " + QueueDescriptor.FILE_NAME + " is missing; nothing was"
                                + " changed. Restore the file from a backup, or rebuild it with"
                                + " EnterpriseQueue.recoverDescriptor(dir, name, mode, keys) (docs/library.md)");
            }
            if (existing == null && replicaOf == null && QueueRole.open(dir, label, false, true).isReplica()) {
                // A replica's descriptor comes from its leader: one made here would be another queue's identity,
                // and the leader's would then be refused (IDENTITY_MISMATCH) and replication of this copy stop.
                throw new QueueConfigurationException(label, QueueConfigurationException.Problem.DESCRIPTOR_MISSING,
                        dir + " is a replica that has not received its leader's " + QueueDescriptor.FILE_NAME
                                + " yet (or its node does not lead it yet); nothing was changed. Open it again once"
                                + " the replication node has received it");
            }
            if (wantEncrypted) {
                if (existing == null && hasCycleFiles(dir) && replicaOf == null) {
                    throw new QueueConfigurationException(label, QueueConfigurationException.Problem.PLAIN_QUEUE_OPENED_AS_ENCRYPTED,
                            dir + " holds a plain Chronicle queue (cycle files, no " + QueueDescriptor.FILE_NAME
                                    + "); open it without encryption");
                }
                // Authenticated unless the application asks otherwise in code: never because a file says so, and a
                // leader's descriptor is a file too (replicaOf(QueueDescriptor.read(dir)) is how it is passed).
                CipherMode requested = cipherMode != null ? cipherMode : DEFAULT_CIPHER_MODE;
                QueueDescriptor fresh = replicaOf != null ? replicaOf : QueueDescriptor.create(label, requested);
                keys = QueueKeys.open(dir, label, existing, requested, fresh, replicaOf != null, keyRing, keyDirectory,
                        keyFilePolicy, readOnly, keyReloadInterval);
                descriptor = keys.descriptor();
            } else {
                if (cipherMode != null) {
                    throw new QueueConfigurationException(label, QueueConfigurationException.Problem.CIPHER_MODE_MISMATCH,
                            "cipherMode(" + cipherMode + ") was set but no keys were given: add .encrypted(keys)");
                }
                descriptor = resolvePlainDescriptor(label, existing);
            }
            try {
                checkCompatible(descriptor);
                checkMetadata(descriptor.name());
                SingleChronicleQueueBuilder chronicleBuilder = SingleChronicleQueueBuilder.single(dir.toFile())
                        .rollCycle(rollCycle)
                        .readOnly(readOnly);
                if (blockSize != null) {
                    chronicleBuilder.blockSize(blockSize);
                }
                if (timeProvider != null) {
                    chronicleBuilder.timeProvider(timeProvider);
                }
                // Before Chronicle maps a cycle file: a writable open extends a file cut short, hiding the cut.
                java.util.Map<Path, Long> oddSizes = WrittenMarks.CutFiles.oddSizes(dir);
                SingleChronicleQueue chronicle = openChronicle(chronicleBuilder, descriptor);
                try {
                    if (descriptor.encrypted()) {
                        IdentityPin.check(chronicle, descriptor, readOnly, dir);
                    }
                    QueueRole role = QueueRole.open(dir, descriptor.name(), replicaOf != null, readOnly);
                    StorageGuard guard = readOnly ? null
                            : StorageGuard.start(dir, minFreeSpace != null ? minFreeSpace : 2 * chronicle.blockSize());
                    return new EnterpriseQueue(dir, chronicle, descriptor, keys, engine, role, quorumAckTimeout, guard,
                            WrittenMarks.CutFiles.of(chronicle, oddSizes));
                } catch (RuntimeException e) {
                    chronicle.close();
                    throw e;
                }
            } catch (RuntimeException e) {
                if (keys != null) {
                    keys.close();
                }
                throw e;
            }
        }

        /**
         * Chronicle's metadata file must be there to be read (a read-only open cannot create it) and be readable (and
         * writable unless read-only): otherwise Chronicle logs a WARN with a stack trace, falls back to a table store
         * that throws UnsupportedOperationException("Read only") at the first look (the identity pin, the replication
         * marks), and the queue would half work.
         */
        private void checkMetadata(String queue) {
            Path metadata = dir.resolve(SingleChronicleQueue.QUEUE_METADATA_FILE);
            if (!Files.exists(metadata)) {
                if (readOnly && hasCycleFiles(dir)) {
                    throw new QueueConfigurationException(queue, QueueConfigurationException.Problem.UNREADABLE_METADATA,
                            metadata + " is missing and a read-only open cannot create it: open the queue writable once"
                                    + " (or restore the file with the cycle files)");
                }
                return;
            }
            if (!Files.isRegularFile(metadata) || !Files.isReadable(metadata)) {
                throw new QueueConfigurationException(queue, QueueConfigurationException.Problem.UNREADABLE_METADATA,
                        metadata + " cannot be read (not a readable file): check its owner and permissions");
            }
            if (!readOnly && !Files.isWritable(metadata)) {
                throw new QueueConfigurationException(queue, QueueConfigurationException.Problem.UNREADABLE_METADATA,
                        metadata + " cannot be written: open the queue with readOnly(true), or fix its owner and permissions");
            }
        }

        private SingleChronicleQueue openChronicle(SingleChronicleQueueBuilder builder, QueueDescriptor descriptor) {
            try {
                return builder.build();
            } catch (Exception e) { // Chronicle throws StreamCorruptedException undeclared
                throw new CorruptedQueueException(descriptor.name(), ExcerptException.UNKNOWN_INDEX,
                        "cannot open the Chronicle queue in " + dir + ": " + e, e);
            }
        }

        private QueueDescriptor resolvePlainDescriptor(String label, QueueDescriptor existing) {
            if (existing != null) {
                if (existing.encrypted()) {
                    throw new QueueConfigurationException(existing.name(), QueueConfigurationException.Problem.ENCRYPTED_QUEUE_WITHOUT_KEYS,
                            "the queue in " + dir + " is encrypted (" + existing.cipherMode() + ", key ids "
                                    + existing.keyFingerprints().keySet() + "); open it with .encrypted(keys)");
                }
                return existing;
            }
            if (hasCycleFiles(dir) && replicaOf == null) {
                // Written by open-source Chronicle: plain by definition, and left exactly as it is (no file added).
                return QueueDescriptor.create(label, null);
            }
            if (readOnly) {
                throw new QueueConfigurationException(label, QueueConfigurationException.Problem.UNREADABLE_DESCRIPTOR,
                        "no queue in " + dir + " to open read-only");
            }
            if (replicaOf != null && replicaOf.encrypted()) {
                throw new QueueConfigurationException(label, QueueConfigurationException.Problem.ENCRYPTED_QUEUE_WITHOUT_KEYS,
                        "the leader's queue is encrypted; open the replica with .encrypted(keys)");
            }
            QueueDescriptor fresh = replicaOf != null ? replicaOf : QueueDescriptor.create(label, null);
            return fresh.createIn(dir);
        }

        private void checkCompatible(QueueDescriptor descriptor) {
            String queue = descriptor.name();
            if (name != null && !name.equals(descriptor.name())) {
                throw new QueueConfigurationException(queue, QueueConfigurationException.Problem.NAME_MISMATCH,
                        "asked for name '" + name + "' but " + dir + " holds queue '" + descriptor.name() + "'");
            }
            if (replicaOf != null && !java.util.Arrays.equals(replicaOf.incarnationId(), descriptor.incarnationId())) {
                throw new QueueConfigurationException(queue, QueueConfigurationException.Problem.IDENTITY_MISMATCH,
                        dir + " holds another incarnation of the queue than the leader's");
            }
        }

        private static boolean hasCycleFiles(Path dir) {
            if (!Files.isDirectory(dir)) {
                return false;
            }
            try (Stream<Path> files = Files.list(dir)) {
                return files.anyMatch(p -> p.getFileName().toString().endsWith(".cq4"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
