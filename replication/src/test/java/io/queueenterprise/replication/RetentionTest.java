package io.queueenterprise.replication;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.replication.config.NodeConfig;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A follower whose next excerpt the leader no longer holds gets a clear state, never a silent gap. */
@org.junit.jupiter.api.Tag("integration")
class RetentionTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    @Test
    void aFollowerBehindTheLeadersRetentionSaysSoAndStoresNothingPastTheGap() throws Exception {
        NodeConfig.QueueSpec spec = new NodeConfig.QueueSpec("ticks", "TEST_SECONDLY", NodeConfig.Encryption.NONE,
                AckMode.ASYNC, Duration.ofSeconds(5), NodeConfig.Retention.unbounded());
        TestCluster cluster = new TestCluster(tmp, 2, List.of(spec));
        Path leaderDir = cluster.queueDirectory(0, "ticks");
        long followerLast;
        try (ReplicationNode a = ReplicationNode.start(cluster.config(0))) {
            a.promote(1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(leaderDir).rollCycle(TestRollCycles.TEST_SECONDLY).build();
                 QueueAppender appender = queue.createAppender()) {
                try (ReplicationNode b = ReplicationNode.start(cluster.config(1))) {
                    b.follow("replica-0", 1);
                    writeInNewCycle(appender);
                    long last = queue.lastIndex();
                    assertTrue(TestCluster.await(WAIT, () -> b.status().queues().get(0).lastIndex() == last));
                    followerLast = last;
                }
                writeInNewCycle(appender);
                writeInNewCycle(appender);
            }
        }
        // retention deleted the leader's two oldest cycle files while the follower was away
        List<Path> cycles;
        try (Stream<Path> files = Files.list(leaderDir)) {
            cycles = files.filter(p -> p.toString().endsWith(".cq4")).sorted().toList();
        }
        // at least one cycle file per burst (a burst can straddle a second on a loaded machine: one more file)
        assertTrue(cycles.size() >= 3, "one cycle file per second written: " + cycles);
        Files.delete(cycles.get(0));
        Files.delete(cycles.get(1));
        try (ReplicationNode a = ReplicationNode.start(cluster.config(0));
             ReplicationNode b = ReplicationNode.start(cluster.config(1))) {
            assertTrue(TestCluster.await(WAIT, () -> b.status().queues().get(0).state() == QueueStatus.State.BEHIND_RETENTION),
                    () -> "follower state: " + b.status());
            assertEquals(followerLast, b.status().queues().get(0).lastIndex(), "nothing stored past the gap");
            assertTrue(TestCluster.await(WAIT, () -> a.status().queues().get(0).peers().get(0).state() == QueueStatus.State.BEHIND_RETENTION),
                    () -> "the leader reports it too: " + a.status());
        }
    }

    @Test
    void aLiveFollowerHoldsTheSameExcerptsAtTheSameIndexesAcrossRollCycles() throws Exception {
        NodeConfig.QueueSpec spec = new NodeConfig.QueueSpec("ticks", "TEST_SECONDLY", NodeConfig.Encryption.NONE,
                AckMode.ASYNC, Duration.ofSeconds(5), NodeConfig.Retention.unbounded());
        TestCluster cluster = new TestCluster(tmp, 2, List.of(spec));
        try (ReplicationNode a = ReplicationNode.start(cluster.config(0));
             ReplicationNode b = ReplicationNode.start(cluster.config(1))) {
            a.promote(1);
            b.follow("replica-0", 1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "ticks"))
                    .rollCycle(TestRollCycles.TEST_SECONDLY).build();
                 QueueAppender appender = queue.createAppender()) {
                for (int cycle = 0; cycle < 3; cycle++) {
                    writeInNewCycle(appender);
                }
                long last = queue.lastIndex();
                assertTrue(TestCluster.await(WAIT, () -> b.status().queues().get(0).lastIndex() == last));
            }
        }
        var onLeader = QueueContents.read(cluster.queueDirectory(0, "ticks"));
        assertEquals(15, onLeader.size());
        // three bursts a second apart: three cycles, or more when a burst straddled a second on a loaded machine
        assertTrue(onLeader.keySet().stream().map(i -> TestRollCycles.TEST_SECONDLY.toCycle(i)).distinct().count() >= 3,
                "at least three cycles, each starting at sequence 0");
        org.junit.jupiter.api.Assertions.assertNull(QueueContents.difference(onLeader, QueueContents.read(cluster.queueDirectory(1, "ticks"))));
    }

    private static void writeInNewCycle(QueueAppender appender) throws InterruptedException {
        Thread.sleep(1_100); // TEST_SECONDLY: a new cycle file each second
        for (int i = 0; i < 5; i++) {
            appender.write(new byte[]{(byte) i});
        }
    }
}
