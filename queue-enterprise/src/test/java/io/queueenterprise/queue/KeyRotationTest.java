package io.queueenterprise.queue;

import io.queueenterprise.crypto.Envelope;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Rotation without downtime: new writes use the new key, old excerpts stay readable. */
@org.junit.jupiter.api.Tag("unit")
class KeyRotationTest {

    @TempDir
    Path dir;

    @Test
    void rotatingTheKeyDirectoryWhileOpenSwitchesNewWritesToTheNewKey() throws Exception {
        Path keys = dir.resolve("keys");
        Path queueDir = dir.resolve("queue");
        TestKeys.writeKeyFile(keys, 1, TestKeys.randomMaterial());
        try (EnterpriseQueue queue = EnterpriseQueue.builder(queueDir).encrypted(keys).build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            appender.write("under key 1".getBytes(StandardCharsets.UTF_8));
            assertFalse(queue.reloadKeys(), "nothing changed");

            TestKeys.writeKeyFile(keys, 2, TestKeys.randomMaterial()); // adds 2.key, active -> 2
            assertTrue(queue.reloadKeys());
            assertEquals(1, queue.descriptor().keyFingerprints().size(), "reloading records nothing");
            appender.write("under key 2".getBytes(StandardCharsets.UTF_8));

            byte[] buffer = new byte[64];
            assertEquals("under key 1", new String(buffer, 0, tailer.read(buffer), StandardCharsets.UTF_8));
            assertEquals("under key 2", new String(buffer, 0, tailer.read(buffer), StandardCharsets.UTF_8));
            assertEquals(List.of(1, 2), keyIdsOnDisk(queue));
            assertEquals(2, queue.descriptor().keyFingerprints().size());
        }
        // A fresh process with the rotated Secret reads both.
        try (EnterpriseQueue queue = EnterpriseQueue.builder(queueDir).encrypted(keys).readOnly(true).build();
             QueueTailer tailer = queue.createTailer()) {
            byte[] buffer = new byte[64];
            assertEquals(11, tailer.read(buffer));
            assertEquals(11, tailer.read(buffer));
        }
    }

    @Test
    void theBackgroundReloaderPicksUpARotation() throws Exception {
        Path keys = dir.resolve("keys");
        TestKeys.writeKeyFile(keys, 1, TestKeys.randomMaterial());
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir.resolve("queue")).encrypted(keys)
                .keyReloadInterval(Duration.ofMillis(20)).build();
             QueueAppender appender = queue.createAppender()) {
            appender.write(new byte[]{1});
            TestKeys.writeKeyFile(keys, 5, TestKeys.randomMaterial());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            // Wait for the ring the next write uses (not for a side effect that precedes its publication).
            while (queue.activeKeyId() != 5) {
                assertTrue(System.nanoTime() < deadline, "reloader installed key 5");
                Thread.sleep(10);
            }
            assertFalse(queue.descriptor().keyFingerprints().containsKey(5), "a key is recorded when it writes, not before");
            appender.write(new byte[]{2});
            assertEquals(List.of(1, 5), keyIdsOnDisk(queue));
            assertTrue(queue.descriptor().keyFingerprints().containsKey(5));
        }
    }

    @Test
    void aRotatedRingWithADifferentKeyUnderAKnownIdIsRefusedAndTheOldRingKept() throws Exception {
        Path keys = dir.resolve("keys");
        TestKeys.writeKeyFile(keys, 1, TestKeys.randomMaterial());
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir.resolve("queue")).encrypted(keys).build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            appender.write(new byte[]{1});
            // Someone replaced key 1's material: refusing it protects every excerpt written so far.
            Files.write(keys.resolve("1.key"), TestKeys.hex(TestKeys.randomMaterial()));
            QueueConfigurationException e = assertThrows(QueueConfigurationException.class, queue::reloadKeys);
            assertEquals(QueueConfigurationException.Problem.WRONG_KEY, e.problem());
            assertThrows(QueueConfigurationException.class, queue::reloadKeys, "still refused, not silently ignored");
            appender.write(new byte[]{2});
            byte[] buffer = new byte[4];
            assertEquals(1, tailer.read(buffer));
            assertEquals(1, tailer.read(buffer));
            assertEquals(2, buffer[0]);
        }
    }

    /**
     * A rotation the background reloader refuses is logged through SLF4J (docs/library.md "Logging"): WARN on logger
     * io.queueenterprise.queue.QueueKeys naming the queue and the reason, never key bytes. The test binding is
     * slf4j-simple, writing {@code LEVEL logger - message} to System.err; through System.Logger (before) the warning
     * went to java.util.logging instead.
     */
    @Test
    void aRefusedBackgroundReloadIsLoggedThroughSlf4j() throws Exception {
        Path keys = dir.resolve("keys");
        TestKeys.writeKeyFile(keys, 1, TestKeys.randomMaterial());
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        java.io.PrintStream originalErr = System.err;
        System.setErr(new java.io.PrintStream(captured, true, StandardCharsets.UTF_8));
        String expected = "WARN " + QueueKeys.class.getName() + " - queue 'queue': key reload refused, keeping the current ring: ";
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir.resolve("queue")).encrypted(keys)
                .keyReloadInterval(Duration.ofMillis(20)).build()) {
            Files.write(keys.resolve("1.key"), TestKeys.hex(TestKeys.randomMaterial())); // key 1 replaced: WRONG_KEY
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!captured.toString(StandardCharsets.UTF_8).contains(expected)) {
                assertTrue(System.nanoTime() < deadline, "a WARN through SLF4J within 20 s: " + captured);
                Thread.sleep(10);
            }
        } finally {
            System.setErr(originalErr);
        }
        assertTrue(captured.toString(StandardCharsets.UTF_8).contains("WRONG_KEY"), captured.toString(StandardCharsets.UTF_8));
    }

    /** Master keys a queue loaded from its key directory are wiped when the queue is closed (docs/crypto.md, Keys). */
    @Test
    void closingTheQueueWipesTheMasterKeysItLoaded() throws Exception {
        Path keys = dir.resolve("keys");
        TestKeys.writeKeyFile(keys, 1, TestKeys.randomMaterial());
        io.queueenterprise.crypto.KeyRing loaded;
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir.resolve("queue")).encrypted(keys).build();
             QueueAppender appender = queue.createAppender()) {
            appender.write(new byte[]{1});
            loaded = queueKeys(queue).get();
            assertFalse(loaded.activeKey().isDestroyed(), "control: usable while open");
        }
        assertTrue(loaded.activeKey().isDestroyed());
    }

    /**
     * Issue 19: a ring replaced by a reload used to stay in memory, unwiped, until the process ended. It is wiped once
     * nothing takes it any more: at once where no appender seals with it, after the next write where one did; a ring
     * refused by a reload is wiped when the directory changes again. Reading and writing go on with the new ring.
     */
    @Test
    void ringsReplacedByAReloadAreWiped() throws Exception {
        Path keys = dir.resolve("keys");
        TestKeys.writeKeyFile(keys, 1, TestKeys.randomMaterial());
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir.resolve("queue")).encrypted(keys).build();
             QueueAppender appender = queue.createAppender();
             QueueTailer tailer = queue.createTailer()) {
            appender.write(new byte[]{1});
            io.queueenterprise.crypto.KeyRing first = queueKeys(queue).get();

            TestKeys.writeKeyFile(keys, 2, TestKeys.randomMaterial());
            assertTrue(queue.reloadKeys());
            io.queueenterprise.crypto.KeyRing second = queueKeys(queue).get();
            assertFalse(first.key(1).isDestroyed(), "the appender still seals with the first ring until its next write");
            appender.write(new byte[]{2});
            assertTrue(first.key(1).isDestroyed(), "replaced and no longer sealed with: wiped");
            assertFalse(second.key(1).isDestroyed() || second.key(2).isDestroyed());

            // A ring the queue refuses (key 2 replaced) is wiped when the directory changes again.
            byte[] key2 = Files.readAllBytes(keys.resolve("2.key"));
            Files.write(keys.resolve("2.key"), TestKeys.hex(TestKeys.randomMaterial()));
            assertThrows(QueueConfigurationException.class, queue::reloadKeys);
            java.lang.reflect.Field sourceField = QueueKeys.class.getDeclaredField("source");
            sourceField.setAccessible(true);
            io.queueenterprise.crypto.KeyRing refused =
                    ((io.queueenterprise.crypto.KeyRingSource) sourceField.get(queueKeys(queue))).current();
            assertFalse(refused == second || refused.key(2).isDestroyed(), "control: the source holds the refused ring");
            Files.write(keys.resolve("2.key"), key2);
            Files.setLastModifiedTime(keys.resolve("2.key"), java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 5_000));
            assertTrue(queue.reloadKeys(), "the directory as it was: a ring equal to the second is installed");
            assertTrue(refused.key(2).isDestroyed() && refused.key(1).isDestroyed(), "the refused ring was wiped");
            assertFalse(second.key(1).isDestroyed(), "the second ring is the appender's until its next write");

            byte[] buffer = new byte[4];
            assertEquals(1, tailer.read(buffer));
            assertEquals(1, buffer[0]);
            assertEquals(1, tailer.read(buffer));
            assertEquals(2, buffer[0]);
            appender.write(new byte[]{3});
            assertTrue(second.key(1).isDestroyed() && second.key(2).isDestroyed(), "replaced, sealed with no more: wiped");
            assertEquals(1, tailer.read(buffer));
            assertEquals(3, buffer[0]);
        }
    }

    /** A read-only queue never seals: the ring it replaced is wiped by the reload itself. */
    @Test
    void aReaderWipesTheReplacedRingAtOnce() throws Exception {
        Path keys = dir.resolve("keys");
        TestKeys.writeKeyFile(keys, 1, TestKeys.randomMaterial());
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir.resolve("queue")).encrypted(keys).build();
             QueueAppender appender = queue.createAppender()) {
            appender.write(new byte[]{7});
        }
        try (EnterpriseQueue reader = EnterpriseQueue.builder(dir.resolve("queue")).encrypted(keys).readOnly(true).build();
             QueueTailer tailer = reader.createTailer()) {
            byte[] buffer = new byte[4];
            assertEquals(1, tailer.read(buffer));
            io.queueenterprise.crypto.KeyRing first = queueKeys(reader).get();
            TestKeys.writeKeyFile(keys, 2, TestKeys.randomMaterial());
            assertTrue(reader.reloadKeys());
            assertTrue(first.key(1).isDestroyed());
            tailer.toStart();
            assertEquals(1, tailer.read(buffer), "key 1 of the new ring opens the old excerpt");
            assertEquals(7, buffer[0]);
        }
    }

    private static QueueKeys queueKeys(EnterpriseQueue queue) throws ReflectiveOperationException {
        java.lang.reflect.Field field = EnterpriseQueue.class.getDeclaredField("keys");
        field.setAccessible(true);
        return (QueueKeys) field.get(queue);
    }

    private static List<Integer> keyIdsOnDisk(EnterpriseQueue queue) {
        List<Integer> ids = new ArrayList<>();
        try (ExcerptTailer raw = queue.chronicleQueue().createTailer()) {
            Bytes<?> envelope = Bytes.allocateElasticOnHeap();
            while (raw.readBytes(envelope)) {
                ids.add(Envelope.keyId(envelope.toByteArray(), 0));
                envelope.clear();
            }
        }
        return ids;
    }
}
