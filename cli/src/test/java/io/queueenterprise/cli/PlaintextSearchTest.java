package io.queueenterprise.cli;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The demo's search: it finds what is there (plain control) and counts full and partial plaintext apart. */
@org.junit.jupiter.api.Tag("unit")
class PlaintextSearchTest {
    private static final int MESSAGES = 5_000;

    @TempDir
    Path dir;

    @Test
    void findsEveryMessageInAPlainQueue() throws IOException {
        write(EnterpriseQueue.builder(dir.resolve("plain")), false);
        assertEquals(new PlaintextSearch.Found(MESSAGES, MESSAGES), PlaintextSearch.inCycleFiles(dir.resolve("plain"), MESSAGES));
    }

    @Test
    void findsTheDistinctivePartOnItsOwn() throws IOException {
        write(EnterpriseQueue.builder(dir.resolve("partial")), true);
        assertEquals(new PlaintextSearch.Found(0, MESSAGES), PlaintextSearch.inCycleFiles(dir.resolve("partial"), MESSAGES));
    }

    @Test
    void findsNothingInAnEncryptedQueue() throws IOException {
        byte[] material = new byte[32];
        new SecureRandom().nextBytes(material);
        KeyRing ring = KeyRing.single(MasterKey.of(1, material));
        write(EnterpriseQueue.builder(dir.resolve("encrypted")).encrypted(ring), false);
        assertEquals(new PlaintextSearch.Found(0, 0), PlaintextSearch.inCycleFiles(dir.resolve("encrypted"), MESSAGES));
    }

    /** Writes the demo's messages; {@code partOnly}: only their distinctive part, followed by other bytes. */
    private static void write(EnterpriseQueue.Builder builder, boolean partOnly) {
        byte[] message = new byte[DemoMessages.SIZE];
        byte[] other = "-different-tail-different-tail-".getBytes(StandardCharsets.US_ASCII);
        try (EnterpriseQueue queue = builder.build(); QueueAppender appender = queue.createAppender()) {
            for (int i = 0; i < MESSAGES; i++) {
                DemoMessages.fill(message, i);
                if (partOnly) {
                    System.arraycopy(other, 0, message, DemoMessages.DISTINCTIVE_LENGTH, DemoMessages.SIZE - DemoMessages.DISTINCTIVE_LENGTH);
                }
                appender.write(message);
            }
        }
    }
}
