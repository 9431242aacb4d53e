package io.queueenterprise.queue;

import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Excerpts that were written and are gone from the cycle files are reported as lost, with their range, never
 * read as the end of the queue (issue 20): a cycle file cut short, a cycle file deleted from the middle.
 */
@Tag("unit")
@org.junit.jupiter.api.Timeout(120)
class LostExcerptsTest {
    private static final long DAY = TimeUnit.DAYS.toMillis(1);

    @TempDir
    Path dir;

    private DamageFixture fixture;

    @org.junit.jupiter.api.BeforeEach
    void fixture() {
        fixture = new DamageFixture(dir);
    }

    private EnterpriseQueue open(boolean encrypted, boolean readOnly) {
        return fixture.open(encrypted, readOnly);
    }

    private static String message(int i) {
        return DamageFixture.message(i);
    }

    /** Writes {@code count} excerpts and returns where each one's bytes start in the cycle file. */
    private long[] writeAndLocate(boolean encrypted, int count) {
        return fixture.write(encrypted, count).positions();
    }

    private List<Path> cycleFiles() throws IOException {
        return fixture.cycleFiles();
    }

    private static void truncate(Path file, long length) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(length);
        }
    }

    /** The first probe: cut at an excerpt boundary, the tailer read 30 of 50 and then -1, as if at the end. */
    @ParameterizedTest(name = "encrypted={0}")
    @ValueSource(booleans = {false, true})
    void aCycleFileCutAtAnExcerptBoundaryIsReportedAsATailLostNotAsTheEnd(boolean encrypted) throws IOException {
        long[] positions = writeAndLocate(encrypted, 50);
        truncate(cycleFiles().get(0), positions[30] - 4); // just before excerpt 30's header
        for (boolean readOnly : new boolean[]{true, false}) {
            try (EnterpriseQueue queue = open(encrypted, readOnly); QueueTailer tailer = queue.createTailer()) {
                byte[] buffer = new byte[64];
                long first = -1;
                for (int i = 0; i < 30; i++) {
                    int n = tailer.read(buffer);
                    assertEquals(message(i), new String(buffer, 0, n, StandardCharsets.UTF_8));
                    first = i == 0 ? tailer.lastReadIndex() : first;
                }
                ExcerptsLostException lost = assertThrows(ExcerptsLostException.class, () -> tailer.read(buffer));
                assertEquals(first + 30, lost.firstLost(), lost.getMessage());
                assertEquals(first + 49, lost.lastLost(), lost.getMessage());
                assertEquals(-1, lost.resumeIndex());
                assertTrue(lost.getMessage().contains(cycleFiles().get(0).toString()), lost.getMessage());
                assertTrue(lost.getMessage().contains("truncated"), lost.getMessage());
                // Reported again until the caller accepts the loss; then the end is the end.
                assertThrows(ExcerptsLostException.class, () -> tailer.read(buffer));
                assertEquals(-1, tailer.skipDamaged());
                assertEquals(-1, tailer.read(buffer));
            }
        }
    }

    /**
     * Cut inside an excerpt: the plain queue returned the cut excerpt with zeros as its data. The cut is seen
     * at open (before Chronicle maps the file, which extends it back with zeros): the cut excerpt starts the range
     * reported lost, and it is never returned as data.
     */
    @ParameterizedTest(name = "encrypted={0}")
    @ValueSource(booleans = {false, true})
    void aCycleFileCutInsideAnExcerptReportsThatExcerptAndTheRestLost(boolean encrypted) throws IOException {
        long[] positions = writeAndLocate(encrypted, 50);
        truncate(cycleFiles().get(0), positions[30] + 3);
        for (boolean readOnly : new boolean[]{true, false}) {
            try (EnterpriseQueue queue = open(encrypted, readOnly); QueueTailer tailer = queue.createTailer()) {
                byte[] buffer = new byte[64];
                for (int i = 0; i < 30; i++) {
                    assertEquals(message(i), new String(buffer, 0, tailer.read(buffer), StandardCharsets.UTF_8));
                }
                ExcerptsLostException lost = assertThrows(ExcerptsLostException.class, () -> tailer.read(buffer));
                assertEquals(tailer.lastReadIndex() + 1, lost.firstLost(), lost.getMessage());
                assertEquals(tailer.lastReadIndex() + 20, lost.lastLost(), lost.getMessage());
                assertTrue(lost.getMessage().contains("was cut at " + (positions[30] + 3) + " bytes"), lost.getMessage());
                assertEquals(-1, tailer.skipDamaged());
                assertEquals(-1, tailer.read(buffer), "the cut excerpt is never returned as data");
            }
        }
    }

    private SetTimeProvider clock() {
        return new SetTimeProvider(TimeUnit.DAYS.toMillis(20_000)).autoIncrement(0, TimeUnit.MILLISECONDS);
    }

    private EnterpriseQueue openDaily(boolean encrypted, SetTimeProvider clock) {
        EnterpriseQueue.Builder builder = EnterpriseQueue.builder(dir).name("orders").rollCycle(RollCycles.FAST_DAILY)
                .timeProvider(clock);
        if (encrypted) {
            builder.encrypted(fixture.ring());
        }
        return builder.build();
    }

    /** Five days with writes on days 0, 1, 2 and 4 (day 3 has none: a gap that is not a loss). */
    private void writeDays(boolean encrypted, SetTimeProvider clock) {
        try (EnterpriseQueue queue = openDaily(encrypted, clock); QueueAppender appender = queue.createAppender()) {
            for (int day = 0; day < 5; day++) {
                if (day != 3) {
                    for (int i = 0; i < 5; i++) {
                        appender.write((day + "-" + i).getBytes(StandardCharsets.UTF_8));
                    }
                }
                clock.advanceMillis(DAY);
            }
        }
    }

    private static List<String> readAll(QueueTailer tailer) {
        List<String> read = new ArrayList<>();
        byte[] buffer = new byte[64];
        int n;
        while ((n = tailer.read(buffer)) >= 0) {
            read.add(new String(buffer, 0, n, StandardCharsets.UTF_8));
        }
        return read;
    }

    /** The second probe: a middle cycle file deleted, the tailer skipped it (223 of 305) without a word. */
    @ParameterizedTest(name = "encrypted={0}")
    @ValueSource(booleans = {false, true})
    void aCycleFileDeletedFromTheMiddleIsReportedLostAndWhatFollowsStaysReadable(boolean encrypted) throws IOException {
        SetTimeProvider clock = clock();
        writeDays(encrypted, clock);
        List<Path> files = cycleFiles();
        assertEquals(4, files.size(), files.toString());
        try (EnterpriseQueue queue = openDaily(encrypted, clock); QueueTailer tailer = queue.createTailer()) {
            assertEquals(20, readAll(tailer).size(), "a day without writes is no loss");
        }
        Files.delete(files.get(1)); // day 1
        try (EnterpriseQueue queue = openDaily(encrypted, clock); QueueTailer tailer = queue.createTailer()) {
            byte[] buffer = new byte[64];
            for (int i = 0; i < 5; i++) {
                assertTrue(tailer.read(buffer) > 0);
            }
            long lastOfDay0 = tailer.lastReadIndex();
            ExcerptsLostException lost = assertThrows(ExcerptsLostException.class, () -> tailer.read(buffer));
            assertTrue(lost.getMessage().contains(files.get(1).toString()), lost.getMessage());
            int day0 = queue.rollCycle().toCycle(lastOfDay0);
            assertEquals(queue.rollCycle().toIndex(day0 + 1, 0), lost.firstLost());
            assertEquals(queue.rollCycle().toIndex(day0 + 2, 0), lost.resumeIndex());
            assertEquals(lost.resumeIndex(), tailer.skipDamaged());
            assertEquals(List.of("2-0", "2-1", "2-2", "2-3", "2-4", "4-0", "4-1", "4-2", "4-3", "4-4"), readAll(tailer));
        }
    }

    @Test
    void aTailerMovedPastTheMissingCycleReadsOnWithoutComplaint() throws IOException {
        SetTimeProvider clock = clock();
        writeDays(false, clock);
        Files.delete(cycleFiles().get(1));
        try (EnterpriseQueue queue = openDaily(false, clock); QueueTailer tailer = queue.createTailer()) {
            int firstCycle = queue.rollCycle().toCycle(queue.firstIndex());
            assertTrue(tailer.moveToIndex(queue.rollCycle().toIndex(firstCycle + 2, 0)));
            assertEquals(10, readAll(tailer).size());
        }
    }

    /** A writer and a reader racing at the tail, across cycle rolls: the marks never make the end look like a loss. */
    @Test
    void aReaderAtTheTailOfALiveWriterNeverReportsALoss() throws Exception {
        SetTimeProvider clock = clock();
        int total = 60_000;
        try (EnterpriseQueue queue = openDaily(true, clock)) {
            Thread writer = new Thread(() -> {
                try (QueueAppender appender = queue.createAppender()) {
                    for (int i = 0; i < total; i++) {
                        appender.write(message(i).getBytes(StandardCharsets.UTF_8));
                        if (i % 20_000 == 19_999) {
                            clock.advanceMillis(DAY);
                        }
                    }
                }
            });
            writer.start();
            try (QueueTailer tailer = queue.createTailer()) {
                byte[] buffer = new byte[64];
                int read = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (read < total && System.nanoTime() < deadline) {
                    int n = tailer.read(buffer);
                    if (n >= 0) {
                        assertEquals(message(read), new String(buffer, 0, n, StandardCharsets.UTF_8));
                        read++;
                    }
                }
                assertEquals(total, read);
            }
            writer.join();
        }
    }

    @ParameterizedTest(name = "encrypted={0}")
    @ValueSource(booleans = {false, true})
    void anEmptyMessageReadsBackEmptyInEveryForm(boolean encrypted) {
        try (EnterpriseQueue queue = open(encrypted, false); QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            appender.write(new byte[0]);
            appender.write(java.nio.ByteBuffer.allocate(0));
            appender.write(net.openhft.chronicle.bytes.Bytes.allocateElasticOnHeap(0));
            appender.write(net.openhft.chronicle.bytes.Bytes.allocateElasticDirect(0));
            appender.write(new byte[]{1});
            byte[] array = new byte[8];
            assertEquals(0, tailer.read(array));
            java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(8);
            assertEquals(0, tailer.read(buffer));
            assertEquals(0, buffer.position());
            net.openhft.chronicle.bytes.Bytes<?> bytes = net.openhft.chronicle.bytes.Bytes.allocateElasticOnHeap(8);
            assertTrue(tailer.read(bytes));
            assertEquals(0, bytes.readRemaining());
            net.openhft.chronicle.bytes.Bytes<?> direct = net.openhft.chronicle.bytes.Bytes.allocateElasticDirect(8);
            try {
                assertTrue(tailer.read(direct));
                assertEquals(0, direct.readRemaining());
            } finally {
                direct.releaseLast();
            }
            assertEquals(1, tailer.read(array));
            assertEquals(1, array[0]);
        }
    }

    /** Chronicle stores an empty document as its padding byte 0x8F: a plain queue refuses that one message. */
    @Test
    void aPlainQueueRefusesTheOneMessageItCannotTellFromEmptyAndAnEncryptedOneStoresIt() {
        byte[] mark = {(byte) 0x8F};
        try (EnterpriseQueue queue = open(false, false); QueueAppender appender = queue.createAppender()) {
            ExcerptException e = assertThrows(ExcerptException.class, () -> appender.write(mark));
            assertTrue(e.getMessage().contains("0x8F"), e.getMessage());
            assertThrows(ExcerptException.class, () -> appender.write(java.nio.ByteBuffer.wrap(mark)));
            assertThrows(ExcerptException.class, () -> appender.write(net.openhft.chronicle.bytes.Bytes.wrapForRead(mark)));
            assertEquals(-1, queue.lastIndex(), "nothing written");
            appender.write(new byte[]{(byte) 0x8F, 0}); // two bytes are not ambiguous
        }
        Path encrypted = dir.resolve("encrypted");
        try (EnterpriseQueue queue = EnterpriseQueue.builder(encrypted).encrypted(fixture.ring()).build();
             QueueAppender appender = queue.createAppender(); QueueTailer tailer = queue.createTailer()) {
            appender.write(mark);
            byte[] buffer = new byte[4];
            assertEquals(1, tailer.read(buffer));
            assertEquals((byte) 0x8F, buffer[0]);
        }
    }
}
