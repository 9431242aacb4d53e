package io.queueenterprise.queue;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.EnvelopeException;
import io.queueenterprise.crypto.KeyFileException;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every kind of bad input gets a typed error naming the queue (and index), and loses nothing. */
@org.junit.jupiter.api.Tag("unit")
class BadInputTest {

    @TempDir
    Path dir;

    /** Key directories live here, beside the queue but inside a folder JUnit removes (not in the system's /tmp). */
    @TempDir
    Path keysRoot;

    private final byte[] material = TestKeys.randomMaterial();

    private KeyRing goodRing() {
        return KeyRing.single(MasterKey.of(1, material));
    }

    private void writeEncrypted(int count) {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).name("orders").encrypted(goodRing()).build();
             QueueAppender appender = queue.createAppender()) {
            for (int i = 0; i < count; i++) {
                appender.write(("order-" + i).getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    private void assertStillReadable(int count) {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(goodRing()).build();
             QueueTailer tailer = queue.createTailer()) {
            byte[] buffer = new byte[64];
            for (int i = 0; i < count; i++) {
                int n = tailer.read(buffer);
                assertEquals("order-" + i, new String(buffer, 0, n, StandardCharsets.UTF_8));
            }
        }
    }

    @Test
    void aWrongKeyIsRefusedAtOpenWithoutTouchingTheQueue() {
        writeEncrypted(3);
        KeyRing wrong = TestKeys.ring(1);
        QueueConfigurationException e = assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(dir).encrypted(wrong).build());
        assertEquals(QueueConfigurationException.Problem.WRONG_KEY, e.problem());
        assertEquals("orders", e.queueName());
        assertTrue(e.getMessage().contains("key id 1"), e.getMessage());
        assertStillReadable(3);
    }

    @Test
    void anEditedDescriptorIsRefusedAtOpenAndNothingIsWritten() throws IOException {
        writeEncrypted(3);
        // A descriptor that lost its fingerprint lines (say, a hand-made replica): its authenticator fails.
        Path descriptor = dir.resolve(QueueDescriptor.FILE_NAME);
        String original = Files.readString(descriptor);
        String kept = Files.readAllLines(descriptor).stream().filter(l -> !l.startsWith("key."))
                .collect(Collectors.joining("\n"));
        Files.writeString(descriptor, kept);
        QueueConfigurationException e = assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(dir).encrypted(goodRing()).build());
        assertEquals(QueueConfigurationException.Problem.DESCRIPTOR_NOT_AUTHENTIC, e.problem());
        assertTrue(e.getMessage().contains(QueueDescriptor.FILE_NAME), e.getMessage());
        assertEquals(kept, Files.readString(descriptor), "a refused open must not rewrite the descriptor");
        Files.writeString(descriptor, original);
        assertStillReadable(3);
    }

    @Test
    void aTruncatedEnvelopeIsRejected() {
        writeEncrypted(1);
        long index;
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(goodRing()).build()) {
            try (ExcerptAppender raw = queue.chronicleQueue().createAppender()) {
                raw.writeBytes(Bytes.wrapForRead(new byte[]{1, 2, 0, 0, 9}));
                index = raw.lastIndexAppended();
            }
            try (QueueTailer tailer = queue.createTailer()) {
                tailer.read(new byte[64]);
                ExcerptDecryptionException e = assertThrows(ExcerptDecryptionException.class, () -> tailer.read(new byte[64]));
                assertEquals(EnvelopeException.Reason.TRUNCATED, e.reason());
                assertEquals(index, e.index());
                assertTrue(tailer.skip(), "skip() moves past a bad excerpt explicitly");
                assertEquals(index, tailer.lastReadIndex());
            }
        }
    }

    @Test
    void aTamperedEnvelopeInTheCycleFileIsRejected() throws IOException {
        writeEncrypted(3);
        byte[] sealed;
        long secondIndex;
        try (var oss = SingleChronicleQueueBuilder.single(dir.toFile()).readOnly(true).build();
             ExcerptTailer raw = oss.createTailer()) {
            raw.readBytes(Bytes.allocateElasticOnHeap());
            Bytes<?> second = Bytes.allocateElasticOnHeap();
            assertTrue(raw.readBytes(second));
            secondIndex = raw.lastReadIndex();
            sealed = second.toByteArray();
        }
        Path cycleFile = cycleFiles().get(0);
        byte[] file = Files.readAllBytes(cycleFile);
        int at = ByteSearch.indexOf(file, sealed);
        assertTrue(at > 0, "envelope found in the cycle file");
        try (RandomAccessFile raf = new RandomAccessFile(cycleFile.toFile(), "rw")) {
            int victim = at + sealed.length / 2;
            raf.seek(victim);
            raf.write(file[victim] ^ 0x01);
        }
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(goodRing()).build();
             QueueTailer tailer = queue.createTailer()) {
            byte[] buffer = new byte[64];
            assertEquals("order-0", new String(buffer, 0, tailer.read(buffer), StandardCharsets.UTF_8));
            java.util.Arrays.fill(buffer, (byte) 0x5A);
            ExcerptDecryptionException e = assertThrows(ExcerptDecryptionException.class, () -> tailer.read(buffer));
            assertEquals(EnvelopeException.Reason.AUTHENTICATION_FAILED, e.reason());
            assertEquals(secondIndex, e.index());
            // Opened in one pass from the mapped file: the plaintext written before the tag was checked is zeroed.
            int failedLength = "order-1".length();
            for (int i = 0; i < buffer.length; i++) {
                assertEquals(i < failedLength ? 0 : (byte) 0x5A, buffer[i], "no byte of a failed excerpt reaches the caller");
            }
            assertTrue(tailer.skip());
            assertEquals("order-2", new String(buffer, 0, tailer.read(buffer), StandardCharsets.UTF_8));
        }
    }

    @Test
    void anEncryptedQueueOpenedWithoutKeysIsRefused() {
        writeEncrypted(1);
        QueueConfigurationException e = assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(dir).build());
        assertEquals(QueueConfigurationException.Problem.ENCRYPTED_QUEUE_WITHOUT_KEYS, e.problem());
        assertTrue(e.getMessage().contains("orders"), e.getMessage());
        assertStillReadable(1);
    }

    @Test
    void aPlainQueueOpenedAsEncryptedIsRefused() {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).build(); QueueAppender appender = queue.createAppender()) {
            appender.write(new byte[]{42});
        }
        QueueConfigurationException e = assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(dir).encrypted(goodRing()).build());
        assertEquals(QueueConfigurationException.Problem.PLAIN_QUEUE_OPENED_AS_ENCRYPTED, e.problem());
    }

    @Test
    void anOpenSourceQueueOpenedAsEncryptedIsRefused() {
        try (var oss = SingleChronicleQueueBuilder.single(dir.toFile()).build(); ExcerptAppender appender = oss.createAppender()) {
            appender.writeBytes(Bytes.from("plain"));
        }
        QueueConfigurationException e = assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(dir).encrypted(goodRing()).build());
        assertEquals(QueueConfigurationException.Problem.PLAIN_QUEUE_OPENED_AS_ENCRYPTED, e.problem());
        try (EnterpriseQueue plain = EnterpriseQueue.builder(dir).build(); QueueTailer tailer = plain.createTailer()) {
            assertEquals(5, tailer.read(new byte[16]));
        }
    }

    @Test
    void aDifferentCipherModeIsRefused() {
        writeEncrypted(1);
        QueueConfigurationException e = assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(dir).encrypted(goodRing()).cipherMode(CipherMode.AES_128_CTR).build());
        assertEquals(QueueConfigurationException.Problem.CIPHER_MODE_MISMATCH, e.problem());
    }

    @Test
    void keyFilesThatAreMissingEmptyOrOfTheWrongLengthAreRefusedNamingTheFile() throws IOException {
        Path keys = dir.resolve("keys");
        Path queueDir = dir.resolve("q");
        KeyFileException missingDir = keyFileProblem(
                () -> EnterpriseQueue.builder(queueDir).encrypted(keys).build());
        assertTrue(missingDir.getMessage().contains(keys.toString()), missingDir.getMessage());

        Files.createDirectories(keys);
        Files.writeString(keys.resolve("active"), "1");
        Files.write(keys.resolve("1.key"), new byte[0]);
        KeyFileException empty = keyFileProblem(
                () -> EnterpriseQueue.builder(queueDir).encrypted(keys).build());
        assertTrue(empty.getMessage().contains("1.key"), empty.getMessage());

        byte[] wrongLength = new byte[20];
        Files.write(keys.resolve("1.key"), wrongLength);
        KeyFileException wrong = keyFileProblem(
                () -> EnterpriseQueue.builder(queueDir).encrypted(keys).build());
        assertTrue(wrong.getMessage().contains("1.key") && wrong.getMessage().contains("20"), wrong.getMessage());

        Files.delete(keys.resolve("1.key"));
        TestKeys.writeKeyFile(keys, 2, material);
        Files.writeString(keys.resolve("active"), "1");
        KeyFileException absentActive = keyFileProblem(
                () -> EnterpriseQueue.builder(queueDir).encrypted(keys).build());
        assertTrue(absentActive.getMessage().contains("active"), absentActive.getMessage());
    }

    /** Key-file problems reach callers as the library's one root type, with the crypto module's detail as cause. */
    private static KeyFileException keyFileProblem(org.junit.jupiter.api.function.Executable open) {
        QueueConfigurationException e = assertThrows(QueueConfigurationException.class, open);
        assertEquals(QueueConfigurationException.Problem.KEY_FILES, e.problem());
        KeyFileException cause = (KeyFileException) e.getCause();
        assertTrue(e.getMessage().endsWith(cause.getMessage()), e.getMessage());
        return cause;
    }

    @Test
    void aCorruptedCycleFileGivesATypedError() throws IOException {
        writeEncrypted(3);
        Path cycleFile = cycleFiles().get(0);
        try (RandomAccessFile raf = new RandomAccessFile(cycleFile.toFile(), "rw")) {
            raf.seek(0);
            raf.write(new byte[]{(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0x7F, 'j', 'u', 'n', 'k'});
        }
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(goodRing()).build()) {
            CorruptedQueueException e = assertThrows(CorruptedQueueException.class, queue::createTailer);
            assertEquals("orders", e.queueName());
            assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
            assertTrue(e.getCause() instanceof java.io.StreamCorruptedException, String.valueOf(e.getCause()));
        }
    }

    /**
     * A flipped bit in Chronicle's 4-byte length word of excerpt 10 of 50: excerpt 10 fails authentication naming
     * its index, and every excerpt after it still reads back (issue 20; more in DamagedHeaderTest).
     */
    @Test
    void aFlippedBitInAnExcerptLengthCostsOnlyThatExcerpt() throws IOException {
        long[] positions = new long[50];
        long[] indexes = new long[50];
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).name("orders").encrypted(goodRing()).build();
             QueueAppender appender = queue.createAppender()) {
            for (int i = 0; i < 50; i++) {
                indexes[i] = appender.write(("order-number-" + i).getBytes(StandardCharsets.UTF_8));
            }
            try (ExcerptTailer raw = queue.chronicleQueue().createTailer()) {
                for (int i = 0; i < 50; i++) {
                    try (net.openhft.chronicle.wire.DocumentContext dc = raw.readingDocument()) {
                        positions[i] = dc.wire().bytes().readPosition();
                    }
                }
            }
        }
        Path cycleFile = cycleFiles().get(0);
        try (RandomAccessFile raf = new RandomAccessFile(cycleFile.toFile(), "rw")) {
            raf.seek(positions[10] - 4); // the low byte of excerpt 10's length word
            int b = raf.read();
            raf.seek(positions[10] - 4);
            raf.write(b ^ 0x04);
        }
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(goodRing()).readOnly(true).build();
             QueueTailer tailer = queue.createTailer()) {
            byte[] buffer = new byte[256];
            for (int i = 0; i < 10; i++) {
                assertEquals(("order-number-" + i).length(), tailer.read(buffer));
            }
            ExcerptDecryptionException tampered = assertThrows(ExcerptDecryptionException.class, () -> tailer.read(buffer));
            assertEquals(indexes[10], tampered.index());
            assertEquals(EnvelopeException.Reason.AUTHENTICATION_FAILED, tampered.reason());
            assertEquals(1, tampered.getMessage().split("0x" + Long.toHexString(indexes[10]), -1).length - 1,
                    "the index is named once: " + tampered.getMessage());
            assertTrue(tailer.skip());
            // Chronicle's own walk would now parse "excerpt 11" from inside excerpt 10's bytes; the tailer goes on
            // from the real chain of headers instead (CycleResync): only the damaged excerpt is lost.
            for (int i = 11; i < 50; i++) {
                int n = tailer.read(buffer);
                assertEquals("order-number-" + i, new String(buffer, 0, n, StandardCharsets.UTF_8));
                assertEquals(indexes[i], tailer.lastReadIndex());
            }
            assertEquals(-1, tailer.read(buffer), "read to the real end, which is not reported as damage");
        }
    }

    @Test
    void aClosedTailerIsAUsageErrorNotDamage() {
        writeEncrypted(1);
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(goodRing()).build()) {
            QueueTailer tailer = queue.createTailer();
            tailer.close();
            QueueStateException e = assertThrows(QueueStateException.class, () -> tailer.read(new byte[64]));
            assertEquals("orders", e.queueName());
        }
    }

    /**
     * The scenario: a key directory holding only a wrong key of another id (2.key, active 2) used to
     * open the queue, record key 2 in the descriptor and lock out the correct rotation (1.key + the real 2.key).
     * Now it is refused, nothing in the queue directory changes, and the correct rotation opens and writes.
     */
    @Test
    void aWrongKeyOfAnotherIdChangesNothingAndTheRealRotationStillOpens() throws IOException {
        writeEncrypted(2);
        Path keys = keysRoot.resolve("keys");
        TestKeys.writeKeyFile(keys, 2, TestKeys.randomMaterial()); // a wrong key 2, active 2
        java.util.Map<String, String> before = snapshot(dir);
        QueueConfigurationException e = assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(dir).encrypted(keys).build());
        assertEquals(QueueConfigurationException.Problem.DESCRIPTOR_NOT_AUTHENTIC, e.problem());
        assertEquals(before, snapshot(dir), "a refused open changes nothing in the queue directory");
        // the correct rotation: 1.key plus the real 2.key, active 2
        Files.write(keys.resolve("1.key"), TestKeys.hex(material));
        byte[] realKey2 = TestKeys.randomMaterial();
        TestKeys.writeKeyFile(keys, 2, realKey2);
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(keys).readOnly(true).build();
             QueueTailer tailer = queue.createTailer()) {
            assertEquals(7, tailer.read(new byte[64]));
        }
        assertEquals(before, snapshot(dir), "reading, even with a key that has not written yet, changes nothing");
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(keys).build();
             QueueAppender appender = queue.createAppender()) {
            assertEquals(before.get(QueueDescriptor.FILE_NAME), snapshot(dir).get(QueueDescriptor.FILE_NAME),
                    "opening for writing records no key before it writes");
            appender.write("order-2".getBytes(StandardCharsets.UTF_8));
            assertEquals(java.util.Set.of(1, 2), queue.descriptor().keyFingerprints().keySet());
        }
    }

    /** Names and contents of the queue directory's files (small test queues only). */
    private static java.util.Map<String, String> snapshot(Path queueDir) throws IOException {
        java.util.Map<String, String> files = new java.util.TreeMap<>();
        try (Stream<Path> list = Files.list(queueDir)) {
            for (Path p : list.toList()) {
                files.put(p.getFileName().toString(), java.util.HexFormat.of().formatHex(
                        java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p))));
            }
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
        return files;
    }

    /**
     * The descriptor is no single point of loss: with it deleted, neither a plain nor an encrypted open
     * reinitialises the directory, and recoverDescriptor rebuilds it from the identity pinned beside the cycle
     * files once a name, mode and keys are proven right on the first excerpt.
     */
    @Test
    void aLostDescriptorIsRefusedNotReinitialisedAndCanBeRecovered() throws IOException {
        writeEncrypted(3);
        Files.delete(dir.resolve(QueueDescriptor.FILE_NAME));
        java.util.Map<String, String> before = snapshot(dir);
        assertEquals(QueueConfigurationException.Problem.DESCRIPTOR_MISSING, assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(dir).build()).problem());
        assertEquals(QueueConfigurationException.Problem.DESCRIPTOR_MISSING, assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(dir).encrypted(goodRing()).build()).problem());
        assertEquals(before, snapshot(dir), "nothing reinitialised");
        // wrong guesses are refused and write nothing
        assertEquals(QueueConfigurationException.Problem.WRONG_KEY, assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.recoverDescriptor(dir, "not-orders", CipherMode.AES_128_CTR_POLY1305, goodRing())).problem());
        assertEquals(QueueConfigurationException.Problem.WRONG_KEY, assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.recoverDescriptor(dir, "orders", CipherMode.AES_128_CTR_POLY1305, TestKeys.ring(1))).problem());
        assertEquals(before, snapshot(dir));
        QueueDescriptor recovered = EnterpriseQueue.recoverDescriptor(dir, "orders", CipherMode.AES_128_CTR_POLY1305, goodRing());
        assertEquals("orders", recovered.name());
        assertStillReadable(3);
        assertEquals(QueueConfigurationException.Problem.DESCRIPTOR_PRESENT, assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.recoverDescriptor(dir, "orders", CipherMode.AES_128_CTR_POLY1305, goodRing())).problem());
    }

    @Test
    void anOpenSourceChronicleQueueOpenedByTheLibraryIsLeftExactlyAsItIs() throws IOException {
        try (net.openhft.chronicle.queue.ChronicleQueue oss = SingleChronicleQueueBuilder.single(dir.toFile()).build();
             ExcerptAppender appender = oss.createAppender()) {
            appender.writeBytes(Bytes.wrapForRead("written by open-source Chronicle".getBytes(StandardCharsets.UTF_8)));
        }
        java.util.Map<String, String> before = snapshot(dir);
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).build(); QueueTailer tailer = queue.createTailer()) {
            assertEquals(32, tailer.read(new byte[64]));
        }
        assertEquals(before.keySet(), snapshot(dir).keySet(), "no descriptor or lock file added");
        assertEquals(before.get(cycleFiles().get(0).getFileName().toString()),
                snapshot(dir).get(cycleFiles().get(0).getFileName().toString()));
    }

    private List<Path> cycleFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".cq4")).sorted().toList();
        }
    }

    @Test
    void aNegativeFreeSpaceReserveOrAckTimeoutIsRefusedWithTheValue() {
        assertEquals("minFreeSpace must be >= 0 bytes: -1",
                assertThrows(IllegalArgumentException.class, () -> EnterpriseQueue.builder(dir).minFreeSpace(-1)).getMessage());
        assertEquals("quorum ack timeout must be positive: PT0S", assertThrows(IllegalArgumentException.class,
                () -> EnterpriseQueue.builder(dir).quorumAcks(java.time.Duration.ZERO)).getMessage());
    }
}
