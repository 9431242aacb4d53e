package io.queueenterprise.queue;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.CryptoEngine;
import net.openhft.chronicle.bytes.Bytes;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Steady-state appends and reads allocate nothing, plain and encrypted. Counts the bytes the
 * thread allocates (HotSpot's per-thread allocation counter: exact, not a timing).
 */
@org.junit.jupiter.api.Tag("unit")
class SteadyStateAllocationTest {
    private static final int WARM_UP = 30_000;
    private static final int MEASURED = 500_000;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
            "PLAIN, JCE",
            "AES_128_CTR, JCE",
            "AES_128_CTR_POLY1305, JCE",
            "AES_128_CTR, BOUNCY_CASTLE",
            "AES_128_CTR_POLY1305, BOUNCY_CASTLE",
    })
    void appendAndReadAllocateNothing(String mode, CryptoEngine engine) {
        EnterpriseQueue.Builder builder = EnterpriseQueue.builder(dir);
        if (!"PLAIN".equals(mode)) {
            builder.encrypted(TestKeys.ring(1)).cipherMode(CipherMode.valueOf(mode)).cryptoEngine(engine);
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadAllocatedMemorySupported());
        long thread = Thread.currentThread().getId();

        try (EnterpriseQueue queue = builder.build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            byte[] message = new byte[40];
            byte[] received = new byte[64];
            Bytes<?> store = Bytes.allocateDirect(40);
            store.write(message);
            Bytes<?> into = Bytes.allocateElasticDirect(128);

            run(appender, tailer, message, received, store, into, WARM_UP);
            // One measured round, no best-of. The smallest object is 16 bytes, so one allocation per 250
            // appends+reads shows as 64 KB and fails. Below that: Chronicle's own occasional allocations
            // (mapping new chunks of the cycle file; measured 10-40 KB per million plain appends+reads and under
            // 2 KB encrypted, source not yet pinned down) and one-off JIT events.
            long before = threads.getThreadAllocatedBytes(thread);
            run(appender, tailer, message, received, store, into, MEASURED);
            long allocated = threads.getThreadAllocatedBytes(thread) - before;
            assertTrue(allocated < 65536, mode + "/" + engine + ": allocated " + allocated + " bytes for "
                    + 2 * MEASURED + " appends+reads");
            store.releaseLast();
            into.releaseLast();
        }
    }

    private static void run(QueueAppender appender, QueueTailer tailer, byte[] message, byte[] received,
                            Bytes<?> store, Bytes<?> into, int count) {
        for (int i = 0; i < count; i++) {
            message[0] = (byte) i;
            if ((i & 1) == 0) {
                appender.write(message);
                assertEquals(40, tailer.read(received));
            } else {
                appender.write(store);
                into.clear();
                tailer.read(into);
            }
        }
    }
}
