package io.queueenterprise.queue;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.KeyRing;
import net.openhft.chronicle.bytes.Bytes;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.BiFunction;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Every write form, plain and in both cipher modes: the largest excerpt is written whole and reads back;
 * one byte more throws {@link ExcerptTooLargeException}, writes nothing, leaves the caller's buffer where it
 * was, and leaves the queue usable (Chronicle itself would fail with a raw overflow, or leave its write lock
 * held, past that size).
 */
@org.junit.jupiter.api.Tag("unit")
class SizeLimitTest {
    private static final long BLOCK_SIZE = 1 << 20; // overlap size 256 KiB: the largest excerpt
    private static final KeyRing RING = TestKeys.ring(1);

    @TempDir
    Path dir;

    private EnterpriseQueue open(String mode) {
        EnterpriseQueue.Builder builder = EnterpriseQueue.builder(dir).blockSize(BLOCK_SIZE);
        if (!mode.equals("plain")) {
            builder.encrypted(RING).cipherMode(CipherMode.valueOf(mode));
        }
        return builder.build();
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "AES_128_CTR", "AES_128_CTR_POLY1305"})
    void everyWriteFormWritesTheLargestExcerptWholeAndRefusesOneByteMore(String mode) {
        try (EnterpriseQueue queue = open(mode);
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            long overhead = mode.equals("plain") ? 0 : CipherMode.valueOf(mode).overhead();
            int max = (int) (queue.maxExcerptLength() - overhead);
            assertEquals(256 * 1024, queue.maxExcerptLength());
            byte[] buffer = new byte[max + 1];
            checkForm(queue, appender, tailer, buffer, max, "byte[]", (a, b) -> a.write(b));
            checkForm(queue, appender, tailer, buffer, max, "heap ByteBuffer", (a, b) -> {
                ByteBuffer bb = ByteBuffer.wrap(b);
                try {
                    return a.write(bb);
                } finally {
                    assertEquals(b.length > max ? 0 : b.length, bb.position(), "position moves on success only");
                }
            });
            checkForm(queue, appender, tailer, buffer, max, "direct ByteBuffer", (a, b) -> {
                ByteBuffer bb = ByteBuffer.allocateDirect(b.length);
                bb.put(b).flip();
                return a.write(bb);
            });
            checkForm(queue, appender, tailer, buffer, max, "BytesStore", (a, b) -> a.write(Bytes.wrapForRead(b)));
            checkForm(queue, appender, tailer, buffer, max, "Wire document", (a, b) -> a.writeDocument(w -> w.bytes().write(b)));
        }
    }

    private static void checkForm(EnterpriseQueue queue, QueueAppender appender, QueueTailer tailer, byte[] buffer,
                                  int max, String form, BiFunction<QueueAppender, byte[], Long> write) {
        byte[] largest = new byte[max];
        Arrays.fill(largest, (byte) 7);
        largest[max - 1] = 9;
        long before = queue.lastIndex();
        long index = write.apply(appender, largest);
        assertEquals(queue.lastIndex(), index, form);
        boolean document = form.equals("Wire document");
        int expected = document ? -1 : max;
        if (!document) {
            assertEquals(expected, tailer.read(buffer), form);
            assertArrayEquals(largest, Arrays.copyOf(buffer, max), form);
        } else {
            Bytes<?> read = Bytes.allocateElasticOnHeap();
            tailer.readDocument(w -> read.write(w.bytes()));
            assertEquals(max, read.readRemaining(), form);
        }
        byte[] tooLarge = new byte[max + 1];
        long last = queue.lastIndex();
        ExcerptTooLargeException e = assertThrows(ExcerptTooLargeException.class, () -> write.apply(appender, tooLarge), form);
        if (!document) {
            assertEquals(max + 1, e.length(), form);
        }
        assertEquals(max, e.maximum(), form);
        assertEquals(last, queue.lastIndex(), form + ": nothing may be written");
        // still usable: the write lock was not left held, the next excerpt follows directly
        long small = appender.write(new byte[] {1, 2, 3});
        assertEquals(3, tailer.read(buffer), form);
        assertEquals(small, tailer.lastReadIndex(), form);
        assertEquals(index + 1, small, form + ": the refused excerpt took no index");
    }
}
