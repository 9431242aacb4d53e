package io.queueenterprise.queue;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.EnvelopeException;
import io.queueenterprise.crypto.ExcerptSealer;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.crypto.QueueIdentity;
import io.queueenterprise.crypto.WriterEpochs;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The attacks of the envelope-v2 review, each performed against a real queue on disk: what used to work now
 * fails, and nothing is written or accepted.
 */
@org.junit.jupiter.api.Tag("unit")
class EnvelopeAttackTest {
    @TempDir
    Path dir;

    private final KeyRing ring = KeyRing.single(MasterKey.of(1, TestKeys.randomMaterial()));

    private long writeDefault(Path queueDir, String... messages) {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(queueDir).name("orders").encrypted(ring).build();
             QueueAppender appender = queue.createAppender()) {
            for (String m : messages) {
                appender.write(m.getBytes(StandardCharsets.UTF_8));
            }
            return queue.lastIndex();
        }
    }

    /**
     * Hole 1: edit encryption=AES_128_CTR in the descriptor and one mode byte of an old excerpt, then restart a
     * default-configured process. It used to accept the tampered excerpt and write new ones with no tag.
     */
    @Test
    void aDowngradeThroughTheDescriptorIsRefused() throws IOException {
        long last = writeDefault(dir, "first", "second");
        Path descriptor = dir.resolve(QueueDescriptor.FILE_NAME);
        String edited = Files.readString(descriptor).replace("encryption=AES_128_CTR_POLY1305", "encryption=AES_128_CTR");
        Files.writeString(descriptor, edited);
        try (EnterpriseQueue raw = EnterpriseQueue.builder(dir).encrypted(ring).readOnly(true).cipherMode(CipherMode.AES_128_CTR)
                .build()) {
            throw new AssertionError("the edited descriptor was accepted: " + raw.descriptor());
        } catch (QueueConfigurationException e) {
            assertEquals(QueueConfigurationException.Problem.DESCRIPTOR_NOT_AUTHENTIC, e.problem(), e.getMessage());
        }
        // A default-configured process: the authenticated mode is required whatever the file says.
        QueueConfigurationException e = assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(dir).encrypted(ring).build());
        assertEquals(QueueConfigurationException.Problem.CIPHER_MODE_MISMATCH, e.problem());
        assertEquals(edited, Files.readString(descriptor));
        // Nothing was appended by the refused opens.
        try (net.openhft.chronicle.queue.ChronicleQueue raw = net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder
                .single(dir.toFile()).readOnly(true).build()) {
            assertEquals(last, raw.lastIndex());
        }
    }

    /**
     * Issue 19: {@code replicaOf(QueueDescriptor.read(dir))} with the leader's descriptor edited to CTR and its
     * authenticator removed. It used to re-sign the edited descriptor and, once promoted, write excerpts without a
     * tag. A leader's descriptor must be authentic, and its mode is only believed when the application asked for it
     * in code.
     */
    @Test
    void anUnauthenticatedCtrDescriptorCannotMakeAReplicaThatWritesWithoutTags() throws IOException {
        Path leaderDir = dir.resolve("leader");
        Path replicaDir = dir.resolve("replica");
        writeDefault(leaderDir, "first");
        Path file = leaderDir.resolve(QueueDescriptor.FILE_NAME);
        StringBuilder edited = new StringBuilder();
        for (String line : Files.readAllLines(file)) {
            if (!line.startsWith("mac")) {
                edited.append(line.replace("encryption=AES_128_CTR_POLY1305", "encryption=AES_128_CTR")).append('\n');
            }
        }
        Files.writeString(file, edited);
        QueueDescriptor forged = QueueDescriptor.read(leaderDir);
        assertEquals(CipherMode.AES_128_CTR, forged.cipherMode());

        QueueConfigurationException e = assertThrows(QueueConfigurationException.class,
                () -> openPromoteAndWrite(EnterpriseQueue.builder(replicaDir).replicaOf(forged).encrypted(ring)));
        assertEquals(QueueConfigurationException.Problem.DESCRIPTOR_NOT_AUTHENTIC, e.problem(), e.getMessage());
        assertTrue(!Files.exists(replicaDir.resolve(QueueDescriptor.FILE_NAME)), "nothing written for the refused replica");
        // Asking for CTR in code does not make an unauthenticated descriptor acceptable either.
        QueueConfigurationException ctr = assertThrows(QueueConfigurationException.class,
                () -> openPromoteAndWrite(EnterpriseQueue.builder(replicaDir).replicaOf(forged).encrypted(ring)
                        .cipherMode(CipherMode.AES_128_CTR)));
        assertEquals(QueueConfigurationException.Problem.DESCRIPTOR_NOT_AUTHENTIC, ctr.problem(), ctr.getMessage());
    }

    /** An authentic CTR leader's descriptor still needs CTR asked for in code: the file alone never turns tags off. */
    @Test
    void anAuthenticCtrLeadersReplicaNeedsCtrAskedForInCode() {
        Path leaderDir = dir.resolve("leader");
        QueueDescriptor leader;
        try (EnterpriseQueue q = EnterpriseQueue.builder(leaderDir).encrypted(ring).cipherMode(CipherMode.AES_128_CTR).build()) {
            leader = q.descriptor();
        }
        QueueConfigurationException e = assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(dir.resolve("replica")).replicaOf(leader).encrypted(ring).build().close());
        assertEquals(QueueConfigurationException.Problem.CIPHER_MODE_MISMATCH, e.problem(), e.getMessage());
        assertTrue(!Files.exists(dir.resolve("replica").resolve(QueueDescriptor.FILE_NAME)));
        try (EnterpriseQueue replica = EnterpriseQueue.builder(dir.resolve("replica")).replicaOf(leader).encrypted(ring)
                .cipherMode(CipherMode.AES_128_CTR).build()) {
            assertEquals(CipherMode.AES_128_CTR, replica.descriptor().cipherMode());
        }
    }

    private static void openPromoteAndWrite(EnterpriseQueue.Builder builder) {
        try (EnterpriseQueue replica = builder.build()) {
            replica.promote(7);
            try (QueueAppender appender = replica.createAppender()) {
                appender.write("unauthenticated?".getBytes(StandardCharsets.UTF_8));
            }
            throw new AssertionError("the replica of a forged descriptor was opened, promoted and written as "
                    + replica.descriptor().cipherMode());
        }
    }

    /** Hole 1: a descriptor copied from another queue (same master key, so it is authentic) is refused. */
    @Test
    void aDescriptorCopiedFromAnotherQueueOrAnOlderIncarnationIsRefused() throws IOException {
        Path a = dir.resolve("a");
        Path b = dir.resolve("b");
        writeDefault(a, "a1");
        writeDefault(b, "b1"); // same name "orders", same key: an authentic descriptor for another incarnation
        Path aDescriptor = a.resolve(QueueDescriptor.FILE_NAME);
        String aOriginal = Files.readString(aDescriptor);
        Files.copy(b.resolve(QueueDescriptor.FILE_NAME), aDescriptor, StandardCopyOption.REPLACE_EXISTING);
        QueueConfigurationException e = assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(a).encrypted(ring).build());
        assertEquals(QueueConfigurationException.Problem.IDENTITY_MISMATCH, e.problem());
        // An older incarnation: the directory is recreated, then the old descriptor is restored into it.
        Files.writeString(aDescriptor, aOriginal);
        String oldIncarnation = aOriginal;
        deleteRecursively(a);
        writeDefault(a, "new incarnation");
        Files.writeString(aDescriptor, oldIncarnation);
        assertEquals(QueueConfigurationException.Problem.IDENTITY_MISMATCH, assertThrows(QueueConfigurationException.class,
                () -> EnterpriseQueue.builder(a).encrypted(ring).build()).problem());
    }

    /** Hole 3: a replica cannot seal, also after a restart; promotion needs a new, higher term. */
    @Test
    void aReplicaRefusesAppendersUntilPromotedUnderANewTerm() {
        Path leaderDir = dir.resolve("leader");
        Path replicaDir = dir.resolve("replica");
        QueueDescriptor leaderDescriptor;
        try (EnterpriseQueue leader = EnterpriseQueue.builder(leaderDir).encrypted(ring).build()) {
            leaderDescriptor = leader.descriptor();
        }
        try (EnterpriseQueue replica = EnterpriseQueue.builder(replicaDir).replicaOf(leaderDescriptor).encrypted(ring).build()) {
            assertTrue(replica.isReplica());
            assertEquals(QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE,
                    assertThrows(QueueConfigurationException.class, replica::createAppender).problem());
        }
        // Restarted without replicaOf: still a replica.
        try (EnterpriseQueue replica = EnterpriseQueue.builder(replicaDir).encrypted(ring).build()) {
            assertEquals(QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE,
                    assertThrows(QueueConfigurationException.class, replica::createAppender).problem());
            replica.promote(5);
            try (QueueAppender appender = replica.createAppender()) {
                appender.write("sealed under term 5".getBytes(StandardCharsets.UTF_8));
            }
            // The term fences; the epoch is random (a term used twice must not repeat nonces: NonceUniquenessTest).
            assertTrue(WriterEpochs.isRandom(Envelope.epoch(lastEnvelope(replica), 0)));
            assertEquals(QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE,
                    assertThrows(QueueConfigurationException.class, () -> replica.promote(5)).problem());
        }
        try (EnterpriseQueue restarted = EnterpriseQueue.builder(replicaDir).encrypted(ring).build()) {
            assertEquals(5, restarted.leaderTerm());
            // Reopened, the leader of term 5 seals with random epochs, as every appender does.
            try (QueueAppender appender = restarted.createAppender()) {
                appender.write("after restart".getBytes(StandardCharsets.UTF_8));
            }
            assertTrue(WriterEpochs.isRandom(Envelope.epoch(lastEnvelope(restarted), 0)));
            // A second process cannot promote under a term another one already recorded.
            try (EnterpriseQueue other = EnterpriseQueue.builder(replicaDir).encrypted(ring).build()) {
                other.promote(7);
            }
            assertThrows(QueueConfigurationException.class, () -> restarted.promote(7));
            assertThrows(QueueConfigurationException.class, () -> restarted.promote(4));
            restarted.promote(8);
            try (QueueAppender appender = restarted.createAppender()) {
                appender.write("term 8".getBytes(StandardCharsets.UTF_8));
            }
            assertTrue(WriterEpochs.isRandom(Envelope.epoch(lastEnvelope(restarted), 0)));
        }
    }

    /**
     * Envelopes sealed without their index (a remote client's) still cannot be replayed or reordered: the
     * reader refuses a writer sequence that does not go up, and reads on after the caller skips it.
     */
    @Test
    void aReplayedUnboundEnvelopeIsRefused() {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(ring).build()) {
            QueueDescriptor d = queue.descriptor();
            ExcerptSealer client = new ExcerptSealer(new QueueIdentity(d.name(), d.incarnationId()), ring,
                    d.cipherMode(), CryptoEngine.JCE);
            byte[][] sealed = new byte[3][];
            try (ExcerptAppender raw = queue.chronicleQueue().createAppender()) {
                for (int i = 0; i < 3; i++) {
                    byte[] env = new byte[6 + d.cipherMode().overhead()];
                    System.arraycopy(("msg-" + i + "!").getBytes(StandardCharsets.UTF_8), 0, env, Envelope.HEADER_LENGTH, 6);
                    client.sealUnbound(env, 0, 6);
                    sealed[i] = env;
                    raw.writeBytes(Bytes.wrapForRead(env));
                }
                raw.writeBytes(Bytes.wrapForRead(sealed[1])); // the attacker's replay
            }
            try (QueueTailer tailer = queue.createTailer()) {
                byte[] buffer = new byte[16];
                for (int i = 0; i < 3; i++) {
                    assertEquals(6, tailer.read(buffer));
                    assertArrayEquals(("msg-" + i + "!").getBytes(StandardCharsets.UTF_8), java.util.Arrays.copyOf(buffer, 6));
                }
                ExcerptDecryptionException e = assertThrows(ExcerptDecryptionException.class, () -> tailer.read(buffer));
                assertEquals(EnvelopeException.Reason.REPLAYED_OR_REORDERED, e.reason());
                assertEquals(queue.lastIndex(), e.index());
                // A reader that goes back to the start reads the originals again: the order memory follows the reader.
                tailer.toStart();
                assertEquals(6, tailer.read(buffer));
            }
        }
    }

    private static byte[] lastEnvelope(EnterpriseQueue queue) {
        try (ExcerptTailer raw = queue.chronicleQueue().createTailer()) {
            raw.moveToIndex(queue.lastIndex());
            Bytes<?> bytes = Bytes.allocateElasticOnHeap();
            assertTrue(raw.readBytes(bytes));
            return bytes.toByteArray();
        }
    }

    private static void deleteRecursively(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
