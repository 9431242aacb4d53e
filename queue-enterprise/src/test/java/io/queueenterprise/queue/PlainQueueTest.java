package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A plain queue is an ordinary Chronicle Queue, both ways. */
@org.junit.jupiter.api.Tag("unit")
class PlainQueueTest {

    @TempDir
    Path dir;

    @Test
    void libraryWritesAreReadableByOpenSourceChronicle() {
        List<Long> indexes = new ArrayList<>();
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).build();
             QueueAppender appender = queue.createAppender()) {
            assertFalse(queue.encrypted());
            indexes.add(appender.write("bytes".getBytes(StandardCharsets.UTF_8)));
            indexes.add(appender.write(ByteBuffer.wrap("buffer".getBytes(StandardCharsets.UTF_8))));
            indexes.add(appender.write(Bytes.from("store")));
            indexes.add(appender.writeDocument(w -> w.write("event").text("document")));
        }
        try (ChronicleQueue oss = SingleChronicleQueueBuilder.single(dir.toFile()).build();
             ExcerptTailer tailer = oss.createTailer()) {
            Bytes<?> bytes = Bytes.allocateElasticOnHeap();
            for (String expected : new String[]{"bytes", "buffer", "store"}) {
                bytes.clear();
                assertTrue(tailer.readBytes(bytes));
                assertEquals(expected, bytes.toString());
            }
            String[] text = new String[1];
            assertTrue(tailer.readDocument(w -> text[0] = w.read("event").text()));
            assertEquals("document", text[0]);
            assertEquals(indexes.get(3), tailer.lastReadIndex());
        }
    }

    @Test
    void openSourceChronicleWritesAreReadableByTheLibrary() {
        List<Long> written = new ArrayList<>();
        try (ChronicleQueue oss = SingleChronicleQueueBuilder.single(dir.toFile()).build();
             ExcerptAppender appender = oss.createAppender()) {
            for (int i = 0; i < 10; i++) {
                appender.writeBytes(Bytes.from("message-" + i));
                written.add(appender.lastIndexAppended());
            }
        }
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).build();
             QueueTailer tailer = queue.createTailer()) {
            byte[] buffer = new byte[64];
            for (int i = 0; i < 10; i++) {
                int n = tailer.read(buffer);
                assertEquals("message-" + i, new String(buffer, 0, n, StandardCharsets.UTF_8));
                assertEquals(written.get(i), tailer.lastReadIndex());
            }
            assertEquals(-1, tailer.read(buffer));
        }
    }

    @Test
    void everyReadFormRoundTrips() {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            byte[] payload = "round-trip".getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < 4; i++) {
                appender.write(payload);
            }
            byte[] array = new byte[32];
            assertEquals(payload.length, tailer.read(array));
            ByteBuffer buffer = ByteBuffer.allocateDirect(32);
            assertEquals(payload.length, tailer.read(buffer));
            assertEquals(payload.length, buffer.position());
            Bytes<?> bytes = Bytes.allocateElasticDirect();
            assertTrue(tailer.read(bytes));
            assertEquals("round-trip", bytes.toString());
            bytes.releaseLast();
            assertTrue(tailer.skip());
            assertFalse(tailer.skip());
        }
    }

    @Test
    void aBufferTooSmallLeavesTheExcerptUnread() {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            long index = appender.write(new byte[100]);
            BufferTooSmallException e = assertThrows(BufferTooSmallException.class, () -> tailer.read(new byte[10]));
            assertEquals(100, e.required());
            assertEquals(index, e.index());
            assertTrue(e.getMessage().contains(queue.name()), e.getMessage());
            assertEquals(100, tailer.read(new byte[100]));
        }
    }

    @Test
    void moveToIndexRereadsAnExcerpt() {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            long first = appender.write(new byte[]{1});
            appender.write(new byte[]{2});
            byte[] one = new byte[1];
            tailer.toEnd();
            assertEquals(-1, tailer.read(one));
            assertTrue(tailer.moveToIndex(first));
            assertEquals(1, tailer.read(one));
            assertArrayEquals(new byte[]{1}, one);
        }
    }

    /** The control for EncryptedQueueTest's plaintext search: the same search finds what a plain queue wrote. */
    @Test
    void thePlaintextSearchFindsWhatAPlainQueueWrote() throws java.io.IOException {
        byte[] needle = "PLAIN-CONTROL-ORDER-".getBytes(StandardCharsets.UTF_8);
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).build(); QueueAppender appender = queue.createAppender()) {
            appender.write(needle);
        }
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(dir)) {
            assertTrue(files.filter(p -> p.toString().endsWith(".cq4")).anyMatch(p -> {
                try {
                    return ByteSearch.contains(java.nio.file.Files.readAllBytes(p), needle);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }));
        }
    }
}
