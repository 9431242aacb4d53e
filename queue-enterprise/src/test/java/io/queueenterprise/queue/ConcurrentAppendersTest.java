package io.queueenterprise.queue;

import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.KeyRing;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Several appenders on several threads write one encrypted queue at once: every excerpt gets its own
 * index (the nonce's unique part), every one opens, and each writer's order is kept.
 */
class ConcurrentAppendersTest {
    private static final int THREADS = 4;
    private static final int PER_THREAD = 5_000;

    @TempDir
    Path dir;

    @Test
    void concurrentAppendersNeverShareAnIndexAndEveryExcerptOpens() throws Exception {
        KeyRing ring = TestKeys.ring(1);
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(ring).build()) {
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> writers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int writer = t;
                writers.add(pool.submit(() -> {
                    byte[] message = new byte[12];
                    try (QueueAppender appender = queue.createAppender()) {
                        start.await();
                        for (int seq = 0; seq < PER_THREAD; seq++) {
                            ByteBuffer.wrap(message).putInt(writer).putLong(seq);
                            appender.write(message);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> w : writers) {
                w.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();

            long[] nextSeq = new long[THREADS];
            Set<Long> indexes = new HashSet<>();
            try (QueueTailer tailer = queue.createTailer()) {
                byte[] buffer = new byte[32];
                int n;
                while ((n = tailer.read(buffer)) >= 0) {
                    assertEquals(12, n);
                    ByteBuffer m = ByteBuffer.wrap(buffer);
                    int writer = m.getInt();
                    long seq = m.getLong();
                    assertEquals(nextSeq[writer]++, seq, "writer " + writer + " in order, nothing lost");
                    assertTrue(indexes.add(tailer.lastReadIndex()), "index used once");
                }
            }
            for (int t = 0; t < THREADS; t++) {
                assertEquals(PER_THREAD, nextSeq[t]);
            }
            // The salts are the per-write random half of the nonce; with unique indexes the pair is unique anyway.
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
                        assertEquals(Envelope.sealedLength(queue.descriptor().cipherMode(), 12), envelope.readRemaining());
                        count++;
                    }
                }
                assertEquals(THREADS * PER_THREAD, count);
            }
        }
    }
}
