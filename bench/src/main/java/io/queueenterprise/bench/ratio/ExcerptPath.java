package io.queueenterprise.bench.ratio;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.ExcerptOpener;
import io.queueenterprise.crypto.ExcerptSealer;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.QueueIdentity;
import io.queueenterprise.bench.subject.RemoteAppendSubject;
import io.queueenterprise.bench.subject.ReplicatedSubject;
import io.queueenterprise.bench.subject.SubjectConfig;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAcknowledgements;
import io.queueenterprise.replication.AckMode;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueTailer;
import io.queueenterprise.remote.AppendListener;
import io.queueenterprise.remote.RemoteAppender;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

import java.nio.file.Path;

/**
 * One way of appending and reading back an excerpt of a fixed size: raw Chronicle, the library plain or
 * encrypted, or the crypto alone. Each subclass has its own loop, so the JIT compiles each path monomorphic
 * even though all subjects share one JVM (they must: interleaving them is what makes their ratios readable on
 * a loaded machine, see {@link PathRatios}).
 */
abstract class ExcerptPath implements AutoCloseable {
    final String name;
    final String description;

    ExcerptPath(String name, String description) {
        this.name = name;
        this.description = description;
    }

    /** Appends and reads back {@code n} excerpts; returns a checksum the caller consumes (no dead code). */
    abstract long run(int n);

    /** What the run did that explains its figure (read after the last round), or empty. */
    String measured() {
        return "";
    }

    @Override
    public abstract void close();

    /** Open-source Chronicle Queue alone: one queue, its appender and tailer, a payload and a receiving buffer. */
    abstract static class RawChronicle extends ExcerptPath {
        final SingleChronicleQueue queue;
        final ExcerptAppender appender;
        final ExcerptTailer tailer;
        final Bytes<?> payload;
        final Bytes<?> received;

        RawChronicle(String name, String description, Path dir, Bytes<?> payload, int size) {
            super(name, description);
            queue = SingleChronicleQueueBuilder.single(dir.toFile()).rollCycle(RollCycles.FAST_DAILY).build();
            appender = queue.createAppender();
            tailer = queue.createTailer();
            this.payload = payload;
            received = Bytes.allocateElasticDirect(size + 64);
        }

        @Override
        public void close() {
            appender.close();
            tailer.close();
            queue.close();
            release(payload);
            received.releaseLast();
        }
    }

    /** {@code writeBytes} / {@code readBytes}: the baseline (direct payload), or from an on-heap array's view. */
    static final class ChronicleRaw extends RawChronicle {
        ChronicleRaw(Path dir, int size, boolean heapPayload) {
            super(heapPayload ? "chronicle-raw-heap" : "chronicle-raw",
                    heapPayload ? "raw Chronicle writeBytes from an on-heap byte[] view (as the CTR appender once wrote)"
                            : "raw Chronicle writeBytes/readBytes, direct payload (the baseline)",
                    dir, heapPayload ? Bytes.wrapForRead(filled(size)) : direct(size), size);
        }

        @Override
        long run(int n) {
            long sum = 0;
            for (int i = 0; i < n; i++) {
                payload.readPosition(0);
                appender.writeBytes(payload);
                received.clear();
                tailer.readBytes(received);
                sum += received.readRemaining();
            }
            return sum;
        }
    }

    /** {@code writingDocument()}/{@code readingDocument()}: the path the authenticated appender takes. */
    static final class ChronicleRawDocument extends RawChronicle {
        ChronicleRawDocument(Path dir, int size) {
            super("chronicle-raw-document", "raw Chronicle writingDocument()/readingDocument() (the path that learns the index in the lock)",
                    dir, direct(size), size);
        }

        @Override
        long run(int n) {
            long sum = 0;
            for (int i = 0; i < n; i++) {
                try (DocumentContext dc = appender.writingDocument()) {
                    dc.wire().bytes().write(payload, 0, payload.readLimit());
                }
                received.clear();
                try (DocumentContext dc = tailer.readingDocument()) {
                    received.write(dc.wire().bytes());
                }
                sum += received.readRemaining();
            }
            return sum;
        }
    }

    /** The library's appender and tailer, plain or encrypted in one mode. */
    static final class Library extends ExcerptPath {
        private final EnterpriseQueue queue;
        private final QueueAppender appender;
        private final QueueTailer tailer;
        private final Bytes<?> payload;
        private final Bytes<?> received;

        Library(Path dir, int size, KeyRing ring, CipherMode mode) {
            super(mode == null ? "library-plain" : mode == CipherMode.AES_128_CTR ? "library-ctr" : "library-ctr-poly1305",
                    "the library's QueueAppender.write(Bytes) + QueueTailer.read(Bytes), "
                            + (mode == null ? "plain" : mode.name()));
            EnterpriseQueue.Builder builder = EnterpriseQueue.builder(dir);
            if (mode != null) {
                builder.encrypted(ring).cipherMode(mode);
            }
            queue = builder.build();
            appender = queue.createAppender();
            tailer = queue.createTailer();
            payload = direct(size);
            received = Bytes.allocateElasticDirect(size + 64);
        }

        @Override
        long run(int n) {
            long sum = 0;
            for (int i = 0; i < n; i++) {
                payload.readPosition(0);
                appender.write(payload);
                received.clear();
                tailer.read(received);
                sum += received.readRemaining();
            }
            return sum;
        }

        @Override
        public void close() {
            appender.close();
            tailer.close();
            queue.close();
            payload.releaseLast();
            received.releaseLast();
        }
    }

    /**
     * Replication's throughput: a two-node cluster on UDP loopback ({@link ReplicatedSubject}); a slice appends
     * {@code n} excerpts on the leader, the same thread reading on the follower (the library, with the key) whatever
     * has arrived between writes, and is done when the follower holds all {@code n}: in async mode (writes return once
     * written on the leader) when the follower's reader has read them; in quorum mode (writes pipelined with a window
     * of {@link ReplicatedSubject#WINDOW} unacknowledged ones) when the leader's acknowledged index reaches the last
     * (a majority of two is both). The follower's reader sees an excerpt of a quorum queue only once it is
     * acknowledged, a hop later: what it has not read at the end of a slice it reads in the next ones.
     *
     * <p>The measuring thread shares the machine's cores with the nodes' threads: whenever a turn of its loop neither
     * writes nor reads (the window is full, or the follower has nothing new), it yields its core to them
     * ({@link #waiting}) instead of spinning, as a consumer on a core of its own would not take theirs. Spinning
     * there took 1-2 µs of CPU per excerpt from the replication threads on 2 cores (docs/performance.md).
     */
    static final class Replicated extends ExcerptPath {
        /** Spins a few turns, then yields; never parks (a park sleeps 50 µs or more here, longer than a batch takes). */
        private final org.agrona.concurrent.IdleStrategy waiting = new org.agrona.concurrent.YieldingIdleStrategy();
        private static final int WINDOW = ReplicatedSubject.WINDOW;
        private final ReplicatedSubject cluster;
        private final QueueAppender appender;
        private final QueueAcknowledgements acks; // null: async
        private final QueueTailer followerTailer;
        private final Bytes<?> payload;
        private final Bytes<?> received;
        private final long[] window = new long[WINDOW];
        private final java.time.Duration timeout = java.time.Duration.ofSeconds(30);

        Replicated(Path dir, int size, AckMode mode) throws java.io.IOException {
            super(mode == AckMode.QUORUM ? "replicated-quorum" : "replicated-async",
                    "library (AES_128_CTR_POLY1305) appending on a replication leader, read back on its follower (UDP"
                            + " loopback), " + mode + (mode == AckMode.QUORUM ? ", pipelined with a window of " + WINDOW : ""));
            java.nio.file.Files.createDirectories(dir);
            cluster = ReplicatedSubject.open(new SubjectConfig(Math.max(size, Long.BYTES), dir, 1024), mode);
            EnterpriseQueue leader = cluster.leaderQueue();
            appender = mode == AckMode.QUORUM ? leader.createPipelinedAppender() : leader.createAppender();
            acks = mode == AckMode.QUORUM ? leader.acknowledgements() : null;
            followerTailer = cluster.followerQueue().createTailer();
            payload = direct(size);
            received = Bytes.allocateElasticDirect(size + 64);
        }

        @Override
        long run(int n) {
            long sum = 0;
            int read = 0;
            for (int written = 0; written < n; ) {
                int slot = written & (WINDOW - 1);
                boolean worked = false;
                if (acks == null || written < WINDOW || acks.isAcknowledged(window[slot])) {
                    payload.readPosition(0);
                    window[slot] = appender.write(payload);
                    written++;
                    worked = true;
                }
                received.clear();
                if (followerTailer.read(received)) {
                    read++;
                    sum += received.readRemaining();
                    worked = true;
                }
                if (worked) {
                    waiting.reset();
                } else {
                    waiting.idle();
                }
            }
            if (acks != null) {
                // done once a majority (both) holds every write; what the follower's reader has not seen yet (it sees
                // an excerpt once the follower learns it is acknowledged, a hop later) is read in the next slices
                acks.awaitAcknowledged(window[(n - 1) & (WINDOW - 1)], timeout);
                return sum + readAvailable();
            }
            long idleSince = 0;
            while (read < n) { // async: done once the follower holds (and its reader has read) every write
                received.clear();
                if (followerTailer.read(received)) {
                    read++;
                    sum += received.readRemaining();
                    idleSince = 0;
                    waiting.reset();
                } else if (idleSince == 0) {
                    idleSince = System.nanoTime();
                } else if (System.nanoTime() - idleSince > timeout.toNanos()) {
                    throw new IllegalStateException(name + ": the follower read " + read + " of " + n + " excerpts and"
                            + " nothing more for " + timeout);
                } else {
                    waiting.idle();
                }
            }
            return sum;
        }

        private long readAvailable() {
            long sum = 0;
            received.clear();
            while (followerTailer.read(received)) {
                sum += received.readRemaining();
                received.clear();
            }
            return sum;
        }

        @Override
        public void close() {
            appender.close();
            followerTailer.close();
            payload.releaseLast();
            received.releaseLast();
            cluster.close();
        }
    }

    /**
     * A remote client's pipelined appends ({@code RemoteAppender.writeAsync}) over Aeron UDP loopback to a
     * replication leader with a follower (both in this process, the lease on): the client's window (1,024 appends or
     * 1 MiB) kept full, a slice done when every append of it is acknowledged (async: by the leader's append; quorum:
     * once the follower holds it too). The client seals each message (AES_128_CTR_POLY1305) and signs its write tag,
     * and batches its sends ({@link #DEFAULT_SEND_BATCHING} unless {@code qe ratios --send-batching-us} says otherwise;
     * 0: each append sent as written): a streaming writer's setting, which the slice's loop is. With the window kept
     * full each append already waits for about a thousand before it, so the linger adds little to its latency.
     */
    static final class Remote extends ExcerptPath implements AppendListener {
        /**
         * {@code RemoteQueue.Builder.sendBatching}: a write while others are in flight may wait up to this long for the
         * next ones. 100 µs: with APPEND_BATCH, the ratio to replicated-async rose from 20 µs to 50 and 100 µs and
         * stayed flat to 500 µs (docs/perf-data/2026-12-08-linger); before APPEND_BATCH, 20 µs had been the best of 5,
         * 20 and 100 µs measured alone (docs/perf-data/2026-12-07-remote-batching).
         */
        public static final java.time.Duration DEFAULT_SEND_BATCHING = java.time.Duration.ofNanos(100_000);
        private final RemoteAppendSubject cluster;
        private final RemoteQueue client;
        private final RemoteAppender appender;
        private final byte[] payload;
        private long acknowledged;
        private RemoteQueueException failure;

        Remote(Path dir, int size, AckMode mode, java.time.Duration sendBatching) throws java.io.IOException {
            super(mode == AckMode.QUORUM ? "remote-append-quorum" : "remote-append-async",
                    "remote client (AES_128_CTR_POLY1305) writeAsync over Aeron UDP loopback to a replication leader"
                            + " with a follower, " + mode + ", its window kept full, sends batched ("
                            + (sendBatching == null ? "the client's default: adaptive" : "linger " + sendBatching.toNanos() / 1000 + " µs")
                            + "); done when every append is acknowledged");
            java.nio.file.Files.createDirectories(dir);
            cluster = RemoteAppendSubject.open(new SubjectConfig(Math.max(size, Long.BYTES), dir, 1024), mode);
            RemoteQueue opened = null;
            try {
                opened = cluster.newClient(sendBatching);
                appender = opened.createAppender(this);
            } catch (RuntimeException e) {
                if (opened != null) {
                    opened.close();
                }
                cluster.close();
                throw e;
            }
            client = opened;
            payload = filled(size);
        }

        @Override
        long run(int n) {
            long before = acknowledged;
            for (int i = 0; i < n; i++) {
                appender.writeAsync(payload, 0, payload.length, i); // waits, driving the connection, while the window is full
            }
            appender.flush();
            if (failure != null) {
                throw failure;
            }
            return acknowledged - before;
        }

        @Override
        String measured() {
            return cluster.leaderIntake();
        }

        @Override
        public void onAcknowledged(long correlation, long index) {
            acknowledged++;
        }

        @Override
        public void onFailed(long correlation, RemoteQueueException e) {
            if (failure == null) {
                failure = e;
            }
        }

        @Override
        public void close() {
            try {
                appender.close();
                client.close();
            } finally {
                cluster.close();
            }
        }
    }

    /** The crypto alone, on arrays: seal in place, then verify and decrypt, index bound as the appender does. */
    static final class SealOpen extends ExcerptPath {
        private final ExcerptSealer sealer;
        private final ExcerptOpener opener;
        private final byte[] plaintext;
        private final byte[] envelope;
        private final byte[] out;
        private long index = 1L << 32;

        SealOpen(int size, KeyRing ring, CipherMode mode) {
            super(mode == CipherMode.AES_128_CTR ? "seal+open-ctr" : "seal+open-ctr-poly1305",
                    "ExcerptSealer.sealInPlace + ExcerptOpener.verify/decryptTo on arrays, " + mode.name() + " (no queue)");
            QueueIdentity identity = QueueIdentity.createNew("ratio");
            sealer = new ExcerptSealer(identity, ring, mode, CryptoEngine.JCE);
            opener = new ExcerptOpener(identity, ring, mode, CryptoEngine.JCE);
            plaintext = filled(size);
            envelope = new byte[Envelope.sealedLength(mode, size)];
            out = new byte[size];
        }

        @Override
        long run(int n) {
            long sum = 0;
            int size = plaintext.length;
            for (int i = 0; i < n; i++) {
                System.arraycopy(plaintext, 0, envelope, Envelope.PAYLOAD_OFFSET, size);
                int length = sealer.sealInPlace(index, envelope, 0, size);
                sum += opener.verify(index, envelope, 0, length);
                opener.decryptTo(out, 0);
                index++;
            }
            return sum;
        }

        @Override
        public void close() {
            sealer.destroy();
            opener.destroy();
        }
    }

    static byte[] filled(int size) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) i;
        }
        return bytes;
    }

    static Bytes<?> direct(int size) {
        Bytes<?> bytes = Bytes.allocateDirect(size);
        bytes.write(filled(size));
        return bytes;
    }

    static void release(Bytes<?> bytes) {
        if (bytes.isDirectMemory()) {
            bytes.releaseLast();
        }
    }
}
