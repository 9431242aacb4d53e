package io.queueenterprise.queue;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.KeyRing;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Several appenders on several threads write one queue at once. The index each {@code write}
 * returned is the index the excerpt is read back at (in an encrypted queue it is also the index
 * the excerpt was sealed with: a mismatch fails authentication, or in CTR mode reads garbage),
 * nothing is lost and each writer's order is kept.
 */
@org.junit.jupiter.api.Tag("unit")
class ConcurrentAppendersTest {
    private static final int THREADS = 4;
    private static final int PER_THREAD = 5_000;
    private static final int MESSAGE = 12;

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"PLAIN", "AES_128_CTR", "AES_128_CTR_POLY1305"})
    void everyExcerptIsReadBackAtTheIndexItsWriteReturned(String mode) throws Exception {
        KeyRing ring = TestKeys.ring(1);
        EnterpriseQueue.Builder builder = EnterpriseQueue.builder(dir);
        if (!mode.equals("PLAIN")) {
            builder.encrypted(ring).cipherMode(CipherMode.valueOf(mode));
        }
        try (EnterpriseQueue queue = builder.build()) {
            long[][] returnedIndex = writeConcurrently(queue);

            int[] nextSeq = new int[THREADS];
            int total = 0;
            try (QueueTailer tailer = queue.createTailer()) {
                byte[] buffer = new byte[32];
                int n;
                while ((n = tailer.read(buffer)) >= 0) {
                    assertEquals(MESSAGE, n);
                    ByteBuffer m = ByteBuffer.wrap(buffer);
                    int writer = m.getInt();
                    long seq = m.getLong();
                    assertTrue(writer >= 0 && writer < THREADS, "excerpt " + total + " reads back as written (writer " + writer + ")");
                    assertEquals(nextSeq[writer], seq, "writer " + writer + " in order, nothing lost");
                    assertEquals(returnedIndex[writer][nextSeq[writer]], tailer.lastReadIndex(),
                            "writer " + writer + " sequence " + seq + ": read back at the index write returned");
                    nextSeq[writer]++;
                    total++;
                }
            }
            for (int t = 0; t < THREADS; t++) {
                assertEquals(PER_THREAD, nextSeq[t], "writer " + t + ": every excerpt read");
            }
            if (!mode.equals("PLAIN")) {
                assertEnvelopeLengths(queue, THREADS * PER_THREAD);
            }
        }
    }

    /** Starts the writers together; returns, per writer and sequence, the index its write returned. */
    private static long[][] writeConcurrently(EnterpriseQueue queue) throws Exception {
        long[][] returnedIndex = new long[THREADS][PER_THREAD];
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> writers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int writer = t;
                writers.add(pool.submit(() -> {
                    byte[] message = new byte[MESSAGE];
                    try (QueueAppender appender = queue.createAppender()) {
                        start.await();
                        for (int seq = 0; seq < PER_THREAD; seq++) {
                            ByteBuffer.wrap(message).putInt(writer).putLong(seq);
                            returnedIndex[writer][seq] = appender.write(message);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> w : writers) {
                w.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS), "writer threads stopped");
        }
        return returnedIndex;
    }

    /** On disk every excerpt is one envelope of a 12-byte message, whatever the interleaving. */
    private static void assertEnvelopeLengths(EnterpriseQueue queue, int expected) {
        try (ExcerptTailer raw = queue.chronicleQueue().createTailer()) {
            Bytes<?> envelope = Bytes.allocateElasticOnHeap();
            int count = 0;
            while (true) {
                try (DocumentContext dc = raw.readingDocument()) {
                    if (!dc.isPresent()) {
                        break;
                    }
                    envelope.clear();
                    envelope.write(dc.wire().bytes());
                    assertEquals(Envelope.sealedLength(queue.descriptor().cipherMode(), MESSAGE), envelope.readRemaining());
                    count++;
                }
            }
            assertEquals(expected, count);
        }
    }
}
