package io.queueenterprise.queue;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.KeyRing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real small file system (a 16 MiB tmpfs this test mounts and unmounts; root only, skipped otherwise) filled
 * by appends: the append that would eat into the reserve is refused with {@link StorageFullException}, nothing
 * is half written, every earlier excerpt reads back, and appends resume once space is freed. Without the guard
 * the same loop ends in Chronicle's write faulting half way (SIGBUS as InternalError) with its lock held.
 */
@org.junit.jupiter.api.Tag("unit")
class DiskFullTest {
    private static final long RESERVE = 4L << 20;

    @TempDir
    Path tmp;
    private SmallFileSystem small;
    private Path mount;

    @BeforeEach
    void mountSmallFileSystem() {
        small = SmallFileSystem.mount(tmp.resolve("small"), 16);
        mount = small.path();
    }

    @AfterEach
    void unmount() {
        if (small != null) {
            small.close(); // every queue is closed by now
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "AES_128_CTR_POLY1305"})
    void anAppendThatWouldFillTheFileSystemIsRefusedWholeAndAppendsResumeWhenSpaceIsFreed(String mode) throws Exception {
        Path dir = mount.resolve("queue");
        Path filler = mount.resolve("filler");
        KeyRing ring = mode.equals("plain") ? null : TestKeys.ring(1);
        List<byte[]> written = new ArrayList<>();
        try (EnterpriseQueue queue = open(dir, ring, mode).blockSize(1 << 20).minFreeSpace(RESERVE).build();
             QueueAppender appender = queue.createAppender()) {
            Files.write(filler, new byte[6 << 20]); // another tenant of the volume
            awaitSample();
            StorageFullException refused = null;
            for (int i = 0; i < 10_000 && refused == null; i++) {
                byte[] excerpt = new byte[4096];
                Arrays.fill(excerpt, (byte) i);
                try {
                    appender.write(excerpt);
                    written.add(excerpt);
                } catch (StorageFullException e) {
                    refused = e;
                }
            }
            assertNotNull(refused, "16 MiB cannot take 40 MiB of excerpts: the guard must refuse first");
            assertTrue(refused.getMessage().contains("nothing written"), refused.getMessage());
            assertEquals(RESERVE, refused.reserveBytes());
            assertTrue(written.size() > 100, "it wrote up to the reserve: " + written.size());
            long lastBefore = queue.lastIndex();

            Files.delete(filler);
            awaitSample();
            byte[] after = new byte[4096];
            Arrays.fill(after, (byte) 77);
            long index = appender.write(after);
            written.add(after);
            assertEquals(lastBefore + 1, index, "the refused append took no index and left no half-written excerpt");
        }
        try (EnterpriseQueue queue = open(dir, ring, mode).build(); QueueTailer tailer = queue.createTailer()) {
            byte[] buffer = new byte[8192];
            for (byte[] expected : written) {
                int n = tailer.read(buffer);
                assertEquals(expected.length, n);
                assertArrayEquals(expected, Arrays.copyOf(buffer, n));
            }
            assertEquals(-1, tailer.read(buffer), "nothing more, nothing half written");
        }
    }

    private static EnterpriseQueue.Builder open(Path dir, KeyRing ring, String mode) {
        EnterpriseQueue.Builder builder = EnterpriseQueue.builder(dir);
        return ring == null ? builder : builder.encrypted(ring).cipherMode(CipherMode.valueOf(mode));
    }

    private static void awaitSample() throws InterruptedException {
        Thread.sleep(StorageGuard.SAMPLE_MILLIS * 5);
    }
}
