package io.queueenterprise.replication;

import io.queueenterprise.queue.AckTimeoutException;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueConfigurationException;
import io.queueenterprise.queue.QueueTailer;
import io.queueenterprise.replication.engine.TermHistory;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.EOFException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Quorum acks, replicated reads, catch-up after a restart, and an old leader's divergent excerpts quarantined. */
@org.junit.jupiter.api.Tag("integration")
class QuorumAndDivergenceTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    @Test
    void aQuorumAppendWaitsForAMajorityAndTimesOutWithATypedErrorWithout() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 3, List.of(TestCluster.queue("orders", AckMode.QUORUM)));
        Path dir = cluster.queueDirectory(0, "orders");
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0))) {
            leader.promote(1);
            try (EnterpriseQueue unaware = EnterpriseQueue.builder(dir).build()) {
                QueueConfigurationException e = assertThrows(QueueConfigurationException.class, unaware::createAppender);
                assertEquals(QueueConfigurationException.Problem.ACK_MODE_MISMATCH, e.problem());
            }
            try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).quorumAcks(Duration.ofMillis(300)).build();
                 QueueAppender appender = queue.createAppender();
                 QueueTailer tailer = queue.createTailer()) {
                // alone, the leader is no majority of three: the append is written locally and not acknowledged
                AckTimeoutException timeout = assertThrows(AckTimeoutException.class,
                        () -> appender.write("first".getBytes(StandardCharsets.UTF_8)));
                assertEquals(queue.lastIndex(), timeout.index());
                byte[] buffer = new byte[64];
                assertEquals(-1, tailer.read(buffer), "replicated reads: not served before a majority holds it");

                try (ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
                    follower.follow("replica-0", 1);
                    // the timed-out excerpt becomes durable once the follower holds it
                    assertTrue(TestCluster.await(WAIT, () -> leader.status().queues().get(0).quorumIndex() == timeout.index()),
                            () -> "quorum index: " + leader.status());
                    assertEquals(5, tailer.read(buffer));
                    try (EnterpriseQueue readOnly = EnterpriseQueue.builder(dir).readOnly(true).build();
                         QueueTailer readOnlyTailer = readOnly.createTailer()) {
                        assertEquals(5, readOnlyTailer.read(buffer), "a read-only open sees the quorum index too");
                    }
                    for (int i = 0; i < 200; i++) {
                        long index = appender.write(("order " + i).getBytes(StandardCharsets.UTF_8));
                        assertTrue(leader.status().queues().get(0).quorumIndex() >= index, "returned before a majority held it");
                    }
                    Histogram latencies = leader.ackLatencySinceLastCall("orders");
                    assertTrue(latencies.getTotalCount() >= 200, "ack latencies recorded: " + latencies.getTotalCount());
                    assertEquals(0, leader.ackLatencySinceLastCall("orders").getTotalCount(), "an interval histogram");
                }
            }
        }
    }

    @Test
    void aRestartedFollowerCatchesUpAndAnOldLeaderQuarantinesWhatItAloneWrote() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 3, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        ReplicationNode a = ReplicationNode.start(cluster.config(0));
        ReplicationNode b = ReplicationNode.start(cluster.config(1));
        ReplicationNode c = ReplicationNode.start(cluster.config(2));
        a.promote(1);
        b.follow("replica-0", 1);
        c.follow("replica-0", 1);
        long shared;
        try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
             QueueAppender appender = queue.createAppender()) {
            write(appender, "a", 0, 100);
            shared = queue.lastIndex();
            assertTrue(TestCluster.await(WAIT, () -> b.status().queues().get(0).lastIndex() == shared
                    && c.status().queues().get(0).lastIndex() == shared));
            // B restarts while A writes: it resumes from its last index
            b.close();
            write(appender, "a", 100, 150);
            try (ReplicationNode b2 = ReplicationNode.start(cluster.config(1))) {
                assertEquals(NodeStatus.Role.FOLLOWER, b2.status().role(), "the role is persisted");
                assertTrue(TestCluster.await(WAIT, () -> b2.status().queues().get(0).lastIndex() == queue.lastIndex()));
            }
            assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, "orders")),
                    QueueContents.read(cluster.queueDirectory(1, "orders"))));
            long beforeSplit = queue.lastIndex();
            assertTrue(TestCluster.await(WAIT, () -> c.status().queues().get(0).lastIndex() == beforeSplit));
            // now A is cut off from everyone and writes 20 excerpts only it holds, then dies
            c.close();
            write(appender, "lost", 0, 20);
        }
        a.close();
        long sharedEnd = QueueContents.read(cluster.queueDirectory(2, "orders")).keySet().stream().mapToLong(Long::longValue).max().orElseThrow();

        // the operator promotes C (the highest durable index among B and C) under term 2; B follows; C takes writes
        try (ReplicationNode c2 = ReplicationNode.start(cluster.config(2));
             ReplicationNode b3 = ReplicationNode.start(cluster.config(1))) {
            c2.promote(2);
            b3.follow("replica-2", 2);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(2, "orders")).build();
                 QueueAppender appender = queue.createAppender()) {
                write(appender, "c", 0, 30);
                long last = queue.lastIndex();
                try (ReplicationNode oldLeader = ReplicationNode.start(cluster.config(0))) {
                    assertEquals(NodeStatus.Role.LEADER, oldLeader.status().role(), "it comes back as what it was");
                    oldLeader.follow("replica-2", 2);
                    assertTrue(TestCluster.await(WAIT, () -> oldLeader.status().queues().get(0).lastIndex() == last
                                    && b3.status().queues().get(0).lastIndex() == last),
                            () -> "old leader did not converge: " + oldLeader.status());
                    // its status says what it moved aside, where, and why
                    QueueStatus.Quarantines moved = oldLeader.status().queues().get(0).quarantines();
                    assertEquals(1, moved.count(), moved::toString);
                    assertEquals(QueueStatus.QuarantineReason.DIVERGENT, moved.lastReason(), moved::toString);
                    assertEquals(20, moved.lastExcerpts(), moved::toString);
                    assertTrue(moved.lastDirectory().startsWith(cluster.queueDirectory(0, "orders").resolve("quarantine")
                            .toAbsolutePath().toString()), moved::toString);
                    assertEquals(QueueStatus.Quarantines.NONE, b3.status().queues().get(0).quarantines(), "B diverged nowhere");
                }
            }
        }
        Map<Long, byte[]> onC = QueueContents.read(cluster.queueDirectory(2, "orders"));
        assertNull(QueueContents.difference(onC, QueueContents.read(cluster.queueDirectory(0, "orders"))));
        assertNull(QueueContents.difference(onC, QueueContents.read(cluster.queueDirectory(1, "orders"))));
        assertEquals(100 + 50 + 30, onC.size());
        onC.values().forEach(bytes -> assertFalse(new String(bytes, StandardCharsets.UTF_8).startsWith("lost"), "no divergent excerpt served"));

        // the 20 divergent excerpts are in quarantine, with their indexes and bytes, and the original files
        Path quarantine = cluster.queueDirectory(0, "orders").resolve("quarantine");
        Path stamp;
        try (Stream<Path> entries = Files.list(quarantine)) {
            stamp = entries.findFirst().orElseThrow();
        }
        int count = 0;
        try (DataInputStream in = new DataInputStream(Files.newInputStream(stamp.resolve("divergent-excerpts.bin")))) {
            while (true) {
                long index;
                try {
                    index = in.readLong();
                } catch (EOFException end) {
                    break;
                }
                byte[] bytes = new byte[in.readInt()];
                in.readFully(bytes);
                assertTrue(index > sharedEnd);
                assertArrayEquals(("lost " + count).getBytes(StandardCharsets.UTF_8), bytes);
                count++;
            }
        }
        assertEquals(20, count);
        try (Stream<Path> originals = Files.list(stamp.resolve("original"))) {
            assertTrue(originals.anyMatch(p -> p.toString().endsWith(".cq4")), "the original cycle files are kept");
        }
        List<TermHistory.Entry> history = TermHistory.load(cluster.queueDirectory(0, "orders")).entries();
        assertEquals(List.of(new TermHistory.Entry(1, -1), new TermHistory.Entry(2, sharedEnd)), history);
    }

    private static void write(QueueAppender appender, String prefix, int from, int to) {
        for (int i = from; i < to; i++) {
            appender.write((prefix + " " + i).getBytes(StandardCharsets.UTF_8));
        }
    }
}
