package io.queueenterprise.queue;

import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A directory a replication node hosts but does not lead, before the leader's descriptor has arrived: a reader
 * (plain or encrypted) must not create a descriptor there, which would give the copy an identity of its own and
 * make it refuse its leader's (replication of that copy would stop with IDENTITY_MISMATCH).
 */
@org.junit.jupiter.api.Tag("unit")
class NodeHostedReplicaTest {
    @TempDir
    Path dir;

    @Test
    void aReaderOnAReplicaWithoutItsLeadersDescriptorIsRefusedAndChangesNothing() throws IOException {
        try (ReplicaStore store = ReplicaStore.open(dir, RollCycles.FAST_DAILY)) {
            List<String> before = listing();
            for (EnterpriseQueue.Builder builder : List.of(EnterpriseQueue.builder(dir),
                    EnterpriseQueue.builder(dir).encrypted(TestKeys.ring(1)))) {
                QueueConfigurationException refused = assertThrows(QueueConfigurationException.class, builder::build);
                assertEquals(QueueConfigurationException.Problem.DESCRIPTOR_MISSING, refused.problem());
                assertTrue(refused.getMessage().contains("has not received its leader's"), refused.getMessage());
            }
            assertFalse(Files.exists(dir.resolve(QueueDescriptor.FILE_NAME)), "no descriptor was created");
            assertEquals(before, listing(), "nothing in the directory changed");
            // once the node leads the queue, the application creates the descriptor as on any queue
            store.recordLeader(dir.getFileName().toString(), 1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(TestKeys.ring(1)).build()) {
                assertTrue(Files.exists(dir.resolve(QueueDescriptor.FILE_NAME)));
                assertTrue(queue.descriptor().encrypted());
            }
        }
    }

    private List<String> listing() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
