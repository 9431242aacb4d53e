package io.queueenterprise.queue;

import io.queueenterprise.crypto.EnvelopeException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A flipped bit in one excerpt's length word costs that excerpt only (issue 20): the excerpts after it stay
 * reachable by the tailer, by skipDamaged() and by moveToIndex, although Chronicle's index places only every
 * 256th excerpt and its own walk goes astray at the damage.
 */
@Tag("unit")
@org.junit.jupiter.api.Timeout(60)
class DamagedHeaderTest {
    private static final int COUNT = 50;
    private static final int DAMAGED = 10;

    @TempDir
    Path dir;

    private long[] indexes;
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

    /** Writes the excerpts and flips bit 2 of excerpt {@link #DAMAGED}'s length word, as the probe did. */
    private void writeAndFlip(boolean encrypted) throws IOException {
        DamageFixture.Written written = fixture.write(encrypted, COUNT);
        indexes = written.indexes();
        try (RandomAccessFile raf = new RandomAccessFile(fixture.cycleFiles().get(0).toFile(), "rw")) {
            raf.seek(written.positions()[DAMAGED] - 4);
            int b = raf.read();
            raf.seek(written.positions()[DAMAGED] - 4);
            raf.write(b ^ 0x04);
        }
    }

    private static String read(QueueTailer tailer) {
        byte[] buffer = new byte[256];
        int n = tailer.read(buffer);
        return n < 0 ? null : new String(buffer, 0, n, StandardCharsets.UTF_8);
    }

    /** The issue: after the damaged excerpt, three intact ones were reported as failed decryptions. */
    @ParameterizedTest(name = "readOnly={0}")
    @ValueSource(booleans = {true, false})
    void anAuthenticatedQueueLosesOnlyTheDamagedExcerptAndReadsEveryOneAfterIt(boolean readOnly) throws IOException {
        writeAndFlip(true);
        try (EnterpriseQueue queue = open(true, readOnly); QueueTailer tailer = queue.createTailer()) {
            for (int i = 0; i < DAMAGED; i++) {
                assertEquals(message(i), read(tailer));
            }
            ExcerptDecryptionException damaged = assertThrows(ExcerptDecryptionException.class, () -> read(tailer));
            assertEquals(indexes[DAMAGED], damaged.index());
            assertEquals(EnvelopeException.Reason.AUTHENTICATION_FAILED, damaged.reason());
            assertTrue(tailer.skip());
            for (int i = DAMAGED + 1; i < COUNT; i++) {
                assertEquals(message(i), read(tailer), "excerpt " + i);
                assertEquals(indexes[i], tailer.lastReadIndex());
            }
            assertEquals(null, read(tailer), "the real end, not reported as damage");
        }
    }

    /** The issue: moveToIndex to an intact excerpt after the damage returned false. */
    @ParameterizedTest(name = "encrypted={0}")
    @ValueSource(booleans = {false, true})
    void everyIntactExcerptAfterTheDamageIsReachedByMoveToIndex(boolean encrypted) throws IOException {
        writeAndFlip(encrypted);
        try (EnterpriseQueue queue = open(encrypted, true); QueueTailer tailer = queue.createTailer()) {
            for (int i = COUNT - 1; i > DAMAGED; i--) { // backwards: each move starts afresh
                assertTrue(tailer.moveToIndex(indexes[i]), "moveToIndex excerpt " + i);
                assertEquals(message(i), read(tailer), "excerpt " + i);
                assertEquals(indexes[i], tailer.lastReadIndex());
            }
            assertTrue(tailer.moveToIndex(indexes[DAMAGED + 1]));
            for (int i = DAMAGED + 1; i < COUNT; i++) {
                assertEquals(message(i), read(tailer), "excerpt " + i + " read on from the move");
            }
            assertEquals(null, read(tailer));
            assertTrue(tailer.moveToIndex(indexes[3]), "before the damage Chronicle's own walk");
            assertEquals(message(3), read(tailer));
        }
    }

    /**
     * The issue: skipDamaged() dropped 38 intact excerpts. A plain excerpt carries no checksum, so the damaged one
     * comes back as whatever its wrong length covers; the next "excerpt" Chronicle's walk finds inside other bytes is
     * impossible (it would end past the cycle's last excerpt), and the tailer goes on from the real chain: every
     * excerpt after the damaged one reads back at its own index, in order, to the end.
     */
    @ParameterizedTest(name = "readOnly={0}")
    @ValueSource(booleans = {true, false})
    void aPlainQueueLosesOnlyTheDamagedExcerpt(boolean readOnly) throws IOException {
        writeAndFlip(false);
        try (EnterpriseQueue queue = open(false, readOnly); QueueTailer tailer = queue.createTailer()) {
            java.util.Map<Integer, String> read = new java.util.TreeMap<>();
            int reports = 0;
            while (reports < 5) {
                try {
                    String message = read(tailer);
                    if (message == null) {
                        break;
                    }
                    read.put((int) (tailer.lastReadIndex() - indexes[0]), message);
                } catch (CorruptedQueueException damage) {
                    reports++;
                    tailer.skipDamaged();
                }
            }
            for (int i = 0; i < COUNT; i++) {
                if (i != DAMAGED) {
                    assertEquals(message(i), read.get(i), "excerpt " + i + " in " + read);
                }
            }
            assertEquals(COUNT, read.size(), "each index once: " + read.keySet());
        }
    }
}
