package io.queueenterprise.queue;

import io.queueenterprise.crypto.Envelope;
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
    private long[] positions;
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
        positions = written.positions();
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

    /**
     * Reads to the end as an application does on a plain queue: each damage report answered by skipDamaged(), at most
     * five of them. What was read, by excerpt number (index minus the first one's).
     */
    private java.util.Map<Integer, String> readSkippingDamage(QueueTailer tailer) {
        java.util.Map<Integer, String> read = new java.util.TreeMap<>();
        for (int reports = 0; reports < 5; ) {
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
        return read;
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
     * The search for the real chain past the damage must not take a chain that starts inside an intact excerpt. The
     * last word of a short excerpt (its final bytes and Chronicle's zero padding) read as a header hops a few KiB
     * ahead, and now and then exactly onto a real header after the damage: by chance in about 3 % of the runs of the
     * tests above, which then failed (found on 2026-12-07, in a full build). Here it is made to happen: the last words
     * of excerpts 1 and 9 hop onto excerpt 37's header. Without the check against the walk from the anchor (the
     * excerpt Chronicle's index places, or the one read last), moveToIndex gave excerpt 36's index to bytes of excerpt
     * 1 and could not reach 11 to 35, and on the plain queue skipDamaged() after reading excerpt 9 jumped to "36" and
     * lost 11 to 35 without a word.
     */
    @ParameterizedTest(name = "encrypted={0}")
    @ValueSource(booleans = {false, true})
    void aChainHoppingFromAnIntactExcerptOntoALaterHeaderIsNotTakenForTheRealOne(boolean encrypted) throws IOException {
        writeAndFlip(encrypted);
        int target = 37;
        try (RandomAccessFile raf = new RandomAccessFile(fixture.cycleFiles().get(0).toFile(), "rw")) {
            for (int excerpt : new int[] {1, 9}) {
                long lastWord = ((positions[excerpt] + sealedLength(encrypted, excerpt) + 3) & ~3L) - 4;
                long hop = (positions[target] - 4) - (lastWord + 4);
                assertTrue(hop > 0 && hop < 0x10000, "a hop the padding allows: " + hop);
                raf.seek(lastWord); // the excerpt's last two bytes, little-endian; the zero padding after them stays
                raf.write((int) hop & 0xFF);
                raf.write((int) (hop >>> 8) & 0xFF);
                raf.seek(lastWord + 2);
                assertEquals(0, raf.read() | raf.read(), "excerpt " + excerpt + " ends in two bytes of padding");
            }
        }
        try (EnterpriseQueue queue = open(encrypted, true); QueueTailer tailer = queue.createTailer()) {
            for (int i = COUNT - 1; i > DAMAGED; i--) {
                assertTrue(tailer.moveToIndex(indexes[i]), "moveToIndex excerpt " + i);
                assertEquals(message(i), read(tailer), "excerpt " + i);
                assertEquals(indexes[i], tailer.lastReadIndex());
            }
        }
        if (encrypted) {
            return; // read in order, the authenticated queue searches from the damaged excerpt itself, past both hops
        }
        try (EnterpriseQueue queue = open(false, true); QueueTailer tailer = queue.createTailer()) {
            java.util.Map<Integer, String> read = readSkippingDamage(tailer);
            for (int i = DAMAGED + 1; i < COUNT; i++) {
                assertEquals(message(i), read.get(i), "excerpt " + i + " in " + read);
            }
        }
    }

    /** The stored length of excerpt {@code i}: its message, sealed or plain. */
    private static int sealedLength(boolean encrypted, int i) {
        int plain = message(i).length();
        return encrypted ? Envelope.sealedLength(EnterpriseQueue.DEFAULT_CIPHER_MODE, plain) : plain;
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
            java.util.Map<Integer, String> read = readSkippingDamage(tailer);
            for (int i = 0; i < COUNT; i++) {
                if (i != DAMAGED) {
                    assertEquals(message(i), read.get(i), "excerpt " + i + " in " + read);
                }
            }
            assertEquals(COUNT, read.size(), "each index once: " + read.keySet());
        }
    }
}
