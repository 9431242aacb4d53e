package io.queueenterprise.replication;

import io.aeron.Aeron;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A remote client on the application's own Aeron client and media driver ({@code RemoteQueue.builder(...).aeron(aeron)})
 * appends to a real node: its publication lives on the application's driver, closing the remote queue leaves the
 * application's client open, and a second remote queue runs on the same client.
 */
@Tag("integration")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RemoteClientOwnAeronTest {
    private static final String QUEUE = "payments";

    @TempDir
    Path tmp;

    @Test
    void aRemoteQueueOnTheApplicationsAeronAppendsAndLeavesThatClientOpen() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 1, List.of(TestCluster.sealedQueue(QUEUE, AckMode.ASYNC))).serveClients();
        KeyRing ring = RemoteClientTest.newRing();
        Path aeronDir = tmp.resolve("application-aeron");
        try (ReplicationNode node = ReplicationNode.start(cluster.config(0));
             MediaDriver driver = MediaDriver.launch(new MediaDriver.Context().aeronDirectoryName(aeronDir.toString())
                     .threadingMode(ThreadingMode.SHARED).dirDeleteOnStart(true).dirDeleteOnShutdown(true));
             Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDir.toString()))) {
            node.promote(1);
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, false);
            String nodeAddress = cluster.clientAddresses().get(0);
            List<Long> indexes = new ArrayList<>();
            try (RemoteQueue remote = RemoteQueue.builder(nodeAddress).queue(QUEUE).clientCredential(cluster.clientCredential)
                    .keyRing(ring).aeron(aeron).build();
                 QueueAppender appender = remote.createAppender()) {
                for (int i = 0; i < 20; i++) {
                    indexes.add(appender.write(("own aeron " + i).getBytes(StandardCharsets.UTF_8)));
                }
                assertTrue(countersNaming(aeron, "endpoint=" + nodeAddress) > 0,
                        "the publication to the node is on the application's driver");
            }
            assertFalse(aeron.isClosed(), "closing the remote queue leaves the application's Aeron client open");
            try (RemoteQueue again = RemoteQueue.builder(nodeAddress).queue(QUEUE).clientCredential(cluster.clientCredential)
                    .keyRing(ring).aeron(aeron).build();
                 QueueAppender appender = again.createAppender()) {
                indexes.add(appender.write("own aeron 20".getBytes(StandardCharsets.UTF_8)));
            }
            List<String> read = RemoteClientTest.readAll(cluster.queueDirectory(0, QUEUE), ring);
            assertEquals(22, read.size(), "one local excerpt and 21 remote ones: " + read);
            for (int i = 0; i <= 20; i++) {
                assertEquals(indexes.get(i) + "=own aeron " + i, read.get(i + 1));
            }
            RemoteQueueException both = assertThrows(RemoteQueueException.class, () -> RemoteQueue.builder(nodeAddress)
                    .queue(QUEUE).clientCredential(cluster.clientCredential).keyRing(ring).aeron(aeron)
                    .aeronDirectory(tmp.resolve("other")).build());
            assertTrue(both.getMessage().contains("aeron and aeronDirectory"), both.getMessage());
        }
    }

    private static int countersNaming(Aeron aeron, String text) {
        AtomicInteger n = new AtomicInteger();
        aeron.countersReader().forEach((id, type, key, label) -> {
            if (label.contains(text)) {
                n.incrementAndGet();
            }
        });
        return n.get();
    }
}
