package io.queueenterprise.protocol.transport;

import io.aeron.Aeron;
import io.aeron.Subscription;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The embedded driver and client on their own, as any owner (the node, the remote client) drives them. */
@Tag("integration")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EmbeddedTransportTest {
    /** An IPC subscription, counting attaches and detaches. */
    private static final class Counting implements EmbeddedTransport.Attachments {
        int attached;
        int detached;
        int checks;
        Subscription subscription;

        @Override
        public void attach(Aeron aeron) {
            attached++;
            subscription = aeron.addSubscription("aeron:ipc", 7);
        }

        @Override
        public void detach() {
            detached++;
            subscription.close();
        }

        @Override
        public boolean closed() {
            return subscription == null || subscription.isClosed();
        }

        @Override
        public void onCheck() {
            checks++;
        }
    }

    private static Path directory() {
        Path base = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        return base.resolve("qe-transport-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
    }

    @Test
    void aDeadClientIsRestartedAndItsAttachmentsMadeAgain() {
        Path dir = directory();
        Counting owner = new Counting();
        long now = 0;
        try (EmbeddedTransport transport = new EmbeddedTransport("test", dir, TimeUnit.SECONDS.toNanos(30), 64 * 1024, 64 * 1024)) {
            transport.start(owner, now);
            transport.invoke();
            assertFalse(transport.dead());
            assertEquals(0, transport.check(now + 1), "not due before CHECK_NANOS");
            now += EmbeddedTransport.CHECK_NANOS;
            assertEquals(0, transport.check(now), "up: nothing to do");
            assertEquals(1, owner.checks);

            transport.closeClientForTest();
            assertTrue(transport.dead());
            now += EmbeddedTransport.CHECK_NANOS;
            assertEquals(1, transport.check(now));
            assertEquals(1, transport.restarts());
            assertEquals(2, owner.attached);
            assertEquals(1, owner.detached);
            assertNull(transport.problem());
            assertNotNull(transport.lastRestartCause());
            assertFalse(transport.dead());
            assertFalse(owner.subscription.isClosed(), "attached again on the new client");
            transport.invoke();
        }
        assertFalse(Files.exists(dir), "the Aeron directory is deleted on close");
    }

    @Test
    void aFailedRestartIsReportedAndTriedAgainAfterTheBackoff() {
        Path dir = directory();
        Counting owner = new Counting();
        boolean[] refuse = {false};
        EmbeddedTransport.Attachments failing = new EmbeddedTransport.Attachments() {
            @Override
            public void attach(Aeron aeron) {
                if (refuse[0]) {
                    throw new IllegalStateException("port taken");
                }
                owner.attach(aeron);
            }

            @Override
            public void detach() {
                owner.detach();
            }

            @Override
            public boolean closed() {
                return owner.closed();
            }
        };
        long now = 0;
        try (EmbeddedTransport transport = new EmbeddedTransport("test", dir, TimeUnit.SECONDS.toNanos(30), 64 * 1024, 64 * 1024)) {
            transport.start(failing, now);
            refuse[0] = true;
            transport.closeClientForTest();
            now += EmbeddedTransport.CHECK_NANOS;
            assertEquals(1, transport.check(now));
            assertTrue(transport.problem().contains("could not be restarted"), transport.problem());
            now += EmbeddedTransport.CHECK_NANOS;
            assertEquals(0, transport.check(now), "within the backoff: not tried again");
            refuse[0] = false;
            now += EmbeddedTransport.RESTART_BACKOFF_NANOS;
            assertEquals(1, transport.check(now));
            assertNull(transport.problem());
            assertEquals(2, transport.restarts());
            assertTrue(transport.lastRestartCause().startsWith("still down after a failed restart"), transport.lastRestartCause());
        }
        assertFalse(Files.exists(dir));
    }
}
