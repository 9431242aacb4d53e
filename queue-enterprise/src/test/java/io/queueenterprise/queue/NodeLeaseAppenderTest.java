package io.queueenterprise.queue;

import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A library appender on a node-hosted queue reads the node's lease deadline ({@link ReplicaStore#publishLeaseUntil})
 * before every write: past it, refused with nothing written, whatever the writable term says; before it, or with no
 * deadline, written. The node here is played by the test through the store's marks.
 */
@org.junit.jupiter.api.Tag("unit")
class NodeLeaseAppenderTest {
    @TempDir
    Path dir;

    @Test
    void anAppendPastTheNodesLeaseIsRefusedAndWritesNothing() {
        byte[] bytes = "x".getBytes(StandardCharsets.US_ASCII);
        try (ReplicaStore store = ReplicaStore.open(dir, RollCycles.FAST_DAILY)) {
            store.recordAckMode(ReplicaStore.ACK_ASYNC);
            store.recordLeader(dir.getFileName().toString(), 2);
            store.publishWritableTerm(2);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).build();
                 QueueAppender appender = queue.createAppender()) {
                long first = appender.write(bytes); // no deadline published yet: none lapses
                store.publishLeaseUntil(Long.MIN_VALUE);
                QueueConfigurationException refused = assertThrows(QueueConfigurationException.class, () -> appender.write(bytes));
                assertEquals(QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE, refused.problem());
                assertTrue(refused.getMessage().contains("holds no lease"), refused.getMessage());
                store.publishLeaseUntil(System.nanoTime() - 1);
                assertThrows(QueueConfigurationException.class, () -> appender.write(bytes), "a deadline just passed");
                assertEquals(first, store.lastIndex(), "nothing refused was written");
                store.publishLeaseUntil(System.nanoTime() + 3_600_000_000_000L);
                long second = appender.write(bytes);
                assertTrue(second > first);
                store.publishLeaseUntil(Long.MAX_VALUE);
                assertTrue(appender.write(bytes) > second);
            }
        }
    }
}
