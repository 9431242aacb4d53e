package io.queueenterprise.queue;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.EnvelopeException;
import io.queueenterprise.crypto.KeyRing;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.InternalAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** An encrypted queue is an ordinary Chronicle Queue whose excerpts are sealed envelopes. */
@org.junit.jupiter.api.Tag("unit")
class EncryptedQueueTest {

    @TempDir
    Path dir;

    private static List<byte[]> messages(int count, long seed) {
        Random random = new Random(seed);
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int size = i % 10 == 0 ? random.nextInt(70_000) : random.nextInt(300);
            byte[] m = new byte[size];
            random.nextBytes(m);
            out.add(m);
        }
        return out;
    }

    @ParameterizedTest
    @EnumSource(CipherMode.class)
    void roundTripsEveryWriteAndReadFormWithBothEngines(CipherMode mode) {
        for (CryptoEngine engine : CryptoEngine.values()) {
            Path queueDir = dir.resolve(mode + "-" + engine);
            KeyRing ring = TestKeys.ring(1);
            List<byte[]> messages = messages(400, 42);
            // Small mapped chunks (1 MiB): some excerpts cross a chunk's end, where the direct copies fall back.
            try (EnterpriseQueue queue = EnterpriseQueue.builder(queueDir).encrypted(ring).cipherMode(mode)
                    .cryptoEngine(engine).blockSize(1 << 20).build();
                 QueueAppender appender = queue.createAppender();
                 QueueTailer tailer = queue.createTailer()) {
                assertTrue(queue.encrypted());
                for (int i = 0; i < messages.size(); i++) {
                    byte[] m = messages.get(i);
                    switch (i % 4) {
                        case 0: appender.write(m); break;
                        case 1: appender.write(ByteBuffer.wrap(m)); break;
                        case 2: appender.write(Bytes.wrapForRead(m)); break;
                        default:
                            Bytes<?> directSource = Bytes.allocateElasticDirect(m.length);
                            directSource.write(m);
                            appender.write(directSource);
                            directSource.releaseLast();
                            break;
                    }
                }
                byte[] buffer = new byte[80_000];
                ByteBuffer direct = ByteBuffer.allocateDirect(80_000);
                Bytes<?> bytes = Bytes.allocateElasticOnHeap();
                Bytes<?> directBytes = Bytes.allocateElasticDirect(64);
                for (int i = 0; i < messages.size(); i++) {
                    byte[] expected = messages.get(i);
                    byte[] actual;
                    switch (i % 4) {
                        case 0:
                            int n = tailer.read(buffer);
                            actual = java.util.Arrays.copyOf(buffer, n);
                            break;
                        case 1:
                            direct.clear();
                            tailer.read(direct);
                            direct.flip();
                            actual = new byte[direct.remaining()];
                            direct.get(actual);
                            break;
                        case 2:
                            bytes.clear();
                            assertTrue(tailer.read(bytes));
                            actual = bytes.toByteArray();
                            break;
                        default:
                            directBytes.clear(); // grows: the plaintext may cross its capacity
                            assertTrue(tailer.read(directBytes));
                            actual = directBytes.toByteArray();
                            break;
                    }
                    assertArrayEquals(expected, actual, "message " + i + " " + mode + " " + engine);
                }
                assertEquals(-1, tailer.read(buffer));
                directBytes.releaseLast();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(CipherMode.class)
    void wireDocumentsRoundTrip(CipherMode mode) {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(TestKeys.ring(7)).cipherMode(mode).build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            appender.writeDocument(w -> w.write("symbol").text("EURUSD").write("price").float64(1.0843).write("qty").int64(1_000_000));
            String[] symbol = new String[1];
            double[] price = new double[1];
            long[] qty = new long[1];
            assertTrue(tailer.readDocument(w -> {
                symbol[0] = w.read("symbol").text();
                price[0] = w.read("price").float64();
                qty[0] = w.read("qty").int64();
            }));
            assertEquals("EURUSD", symbol[0]);
            assertEquals(1.0843, price[0]);
            assertEquals(1_000_000, qty[0]);
        }
    }

    @ParameterizedTest
    @EnumSource(CipherMode.class)
    void cycleFilesHoldNoPlaintextAndOpenSourceTailersSeeOpaqueEnvelopesAtTheSameIndexes(CipherMode mode) throws IOException {
        String secret = "TOP-SECRET-ORDER-";
        List<Long> indexes = new ArrayList<>();
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(TestKeys.ring(1)).cipherMode(mode).build();
             QueueAppender appender = queue.createAppender()) {
            for (int i = 0; i < 100; i++) {
                indexes.add(appender.write((secret + i).getBytes(StandardCharsets.UTF_8)));
            }
        }
        byte[] needle = secret.getBytes(StandardCharsets.UTF_8);
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> cycleFiles = files.filter(p -> p.toString().endsWith(".cq4")).toList();
            assertFalse(cycleFiles.isEmpty());
            for (Path file : cycleFiles) {
                assertFalse(ByteSearch.contains(Files.readAllBytes(file), needle), "plaintext found in " + file);
            }
        }
        try (ChronicleQueue oss = SingleChronicleQueueBuilder.single(dir.toFile()).readOnly(true).build();
             ExcerptTailer tailer = oss.createTailer()) {
            for (int i = 0; i < 100; i++) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    assertTrue(dc.isPresent());
                    assertEquals(indexes.get(i), dc.index());
                    byte[] raw = dc.wire().bytes().toByteArray();
                    assertEquals(Envelope.sealedLength(mode, (secret + i).length()), raw.length);
                    assertFalse(ByteSearch.contains(raw, needle));
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(CipherMode.class)
    void aCopyOfTheExcerptsAtTheSameIndexesReadsBackWithTheKey(CipherMode mode) {
        KeyRing ring = TestKeys.ring(3);
        Path leaderDir = dir.resolve("leader");
        Path followerDir = dir.resolve("follower");
        List<byte[]> messages = messages(50, 7);
        try (EnterpriseQueue leader = EnterpriseQueue.builder(leaderDir).encrypted(ring).cipherMode(mode).build();
             QueueAppender appender = leader.createAppender()) {
            messages.forEach(appender::write);
            // What replication does: ship sealed bytes, write them at the identical index, no key needed.
            try (ChronicleQueue follower = SingleChronicleQueueBuilder.single(followerDir.toFile()).build();
                 InternalAppender copier = (InternalAppender) follower.createAppender();
                 ExcerptTailer source = leader.chronicleQueue().createTailer()) {
                Bytes<?> sealed = Bytes.allocateElasticOnHeap();
                while (true) {
                    sealed.clear();
                    long index;
                    try (DocumentContext dc = source.readingDocument()) {
                        if (!dc.isPresent()) {
                            break;
                        }
                        index = dc.index();
                        sealed.write(dc.wire().bytes());
                    }
                    copier.writeBytes(index, sealed);
                }
            }
            // The mode is asked for in code, as the leader's was: a descriptor never turns authentication off.
            try (EnterpriseQueue follower = EnterpriseQueue.builder(followerDir).replicaOf(leader.descriptor())
                    .encrypted(ring).cipherMode(leader.descriptor().cipherMode()).build();
                 QueueTailer tailer = follower.createTailer()) {
                // A replica never seals: no appender until it is promoted under a new term.
                QueueConfigurationException refused = assertThrows(QueueConfigurationException.class,
                        follower::createAppender);
                assertEquals(QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE, refused.problem());
                byte[] buffer = new byte[80_000];
                for (byte[] expected : messages) {
                    int n = tailer.read(buffer);
                    assertArrayEquals(expected, java.util.Arrays.copyOf(buffer, n));
                }
                assertEquals(leader.lastIndex(), follower.lastIndex());
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = CipherMode.class, names = "AES_128_CTR_POLY1305")
    void anExcerptMovedToAnotherIndexIsRejected(CipherMode mode) {
        KeyRing ring = TestKeys.ring(3);
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(ring).cipherMode(mode).build();
             QueueAppender appender = queue.createAppender()) {
            appender.write("first".getBytes(StandardCharsets.UTF_8));
            // Replay the first sealed excerpt as the second: same key, wrong index.
            Bytes<?> sealed = Bytes.allocateElasticOnHeap();
            try (ExcerptTailer raw = queue.chronicleQueue().createTailer()) {
                assertTrue(raw.readBytes(sealed));
            }
            try (var rawAppender = queue.chronicleQueue().createAppender()) {
                rawAppender.writeBytes(sealed);
            }
            try (QueueTailer tailer = queue.createTailer()) {
                byte[] buffer = new byte[64];
                assertEquals(5, tailer.read(buffer));
                ExcerptDecryptionException e = assertThrows(ExcerptDecryptionException.class, () -> tailer.read(buffer));
                assertEquals(EnvelopeException.Reason.AUTHENTICATION_FAILED, e.reason());
                assertEquals(queue.lastIndex(), e.index());
            }
        }
    }
}
