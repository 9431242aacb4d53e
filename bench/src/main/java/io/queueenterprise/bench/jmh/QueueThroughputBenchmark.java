package io.queueenterprise.bench.jmh;

import io.queueenterprise.bench.harness.Directories;
import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueTailer;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;

/**
 * Single-thread append + read of one excerpt, per subject, in one run: raw open-source Chronicle
 * Queue (the baseline: {@code writeBytes}/{@code readBytes}), raw Chronicle through
 * {@code writingDocument()}/{@code readingDocument()} (the path the encrypted appender must take to learn
 * the index inside the write lock: the control that separates path cost from crypto cost), the library
 * plain, and the library encrypted in each cipher mode. The same
 * Bytes payload and the same Chronicle calls underneath; the queue is recreated per iteration (in
 * /dev/shm when present) so files do not grow without bound. Run with {@code -prof gc} to see the
 * allocation rate per operation.
 *
 * <pre>bin/qe jmh QueueThroughputBenchmark -prof gc</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class QueueThroughputBenchmark {

    @Param({"chronicle-raw", "chronicle-raw-document", "library-plain", "library-ctr", "library-ctr-poly1305"})
    public String subject;

    @Param({"40", "256"})
    public int size;

    private Path dir;
    private SingleChronicleQueue rawQueue;
    private ExcerptAppender rawAppender;
    private ExcerptTailer rawTailer;
    private boolean rawDocument;
    private EnterpriseQueue queue;
    private QueueAppender appender;
    private QueueTailer tailer;
    private Bytes<?> payload;
    private Bytes<?> received;
    private KeyRing ring;

    @Setup(Level.Trial)
    public void keys() {
        byte[] material = new byte[32];
        new SecureRandom().nextBytes(material);
        ring = KeyRing.single(MasterKey.of(1, material));
        payload = Bytes.allocateDirect(size);
        for (int i = 0; i < size; i++) {
            payload.writeByte((byte) i);
        }
        received = Bytes.allocateElasticDirect(size + 64);
    }

    @Setup(Level.Iteration)
    public void open() throws IOException {
        Path shm = Path.of("/dev/shm");
        dir = Files.createTempDirectory(Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")), "qe-jmh-");
        switch (subject) {
            case "chronicle-raw":
            case "chronicle-raw-document":
                rawDocument = subject.equals("chronicle-raw-document");
                rawQueue = SingleChronicleQueueBuilder.single(dir.toFile()).rollCycle(RollCycles.FAST_DAILY).build();
                rawAppender = rawQueue.createAppender();
                rawTailer = rawQueue.createTailer();
                return;
            case "library-plain":
                queue = EnterpriseQueue.builder(dir).build();
                break;
            case "library-ctr":
                queue = EnterpriseQueue.builder(dir).encrypted(ring).cipherMode(CipherMode.AES_128_CTR).build();
                break;
            case "library-ctr-poly1305":
                queue = EnterpriseQueue.builder(dir).encrypted(ring).cipherMode(CipherMode.AES_128_CTR_POLY1305).build();
                break;
            default:
                throw new IllegalArgumentException("unknown subject " + subject);
        }
        appender = queue.createAppender();
        tailer = queue.createTailer();
    }

    @Benchmark
    public long appendAndRead() {
        received.clear();
        if (rawDocument) {
            try (DocumentContext dc = rawAppender.writingDocument()) {
                dc.wire().bytes().write(payload);
            }
            try (DocumentContext dc = rawTailer.readingDocument()) {
                received.write(dc.wire().bytes());
            }
        } else if (rawAppender != null) {
            rawAppender.writeBytes(payload);
            rawTailer.readBytes(received);
        } else {
            appender.write(payload);
            tailer.read(received);
        }
        return received.readRemaining();
    }

    @TearDown(Level.Iteration)
    public void close() {
        if (rawQueue != null) {
            rawAppender.close();
            rawTailer.close();
            rawQueue.close();
            rawQueue = null;
            rawAppender = null;
        } else {
            appender.close();
            tailer.close();
            queue.close();
        }
        Directories.deleteRecursively(dir);
    }

    @TearDown(Level.Trial)
    public void release() {
        payload.releaseLast();
        received.releaseLast();
    }
}
