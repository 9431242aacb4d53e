package io.queueenterprise.replication;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A live process holds Chronicle's write lock on the follower's copy of one queue and is stopped (SIGSTOP), as a
 * writer stalled inside Chronicle: the follower's write to that queue waits on the lock (up to Chronicle's timeout).
 * It waits on that queue's writer thread only: the duty thread goes on with the other queue (also once the stalled
 * queue's hand-off ring is full), the heartbeats (the leader keeps the session) and role changes; the stalled queue
 * resumes once the lock is released. The stall is kept
 * well under Chronicle's lock timeout, after which the write would fail (CORRUPTED) instead.
 */
@org.junit.jupiter.api.Tag("process")
class StalledWriterTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Longer than the follower's 3 s session timeout: heartbeats must have flowed throughout. */
    private static final long STALL_MILLIS = 4_000;

    @TempDir
    Path tmp;

    @Test
    void aFollowerKeepsServingItsOtherQueuesWhileOneQueuesWriteWaitsOnAStalledLockHolder() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("stalled", AckMode.ASYNC),
                TestCluster.queue("orders", AckMode.ASYNC)));
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0));
             ReplicationNode follower = ReplicationNode.start(cluster.config(1));
             AdminEndpoint followerAdmin = AdminEndpoint.start(follower)) {
            leader.promote(1);
            follower.follow("replica-0", 1);
            try (EnterpriseQueue stalled = EnterpriseQueue.builder(cluster.queueDirectory(0, "stalled")).build();
                 QueueAppender stalledAppender = stalled.createAppender();
                 EnterpriseQueue orders = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender ordersAppender = orders.createAppender()) {
            write(stalledAppender, "stalled", 0, 5);
            write(ordersAppender, "orders", 0, 5);
            long stalledBefore = stalled.lastIndex();
            assertTrue(TestCluster.await(WAIT, () -> lastIndex(follower, 0) == stalledBefore && lastIndex(follower, 1) == orders.lastIndex()));

            Process holder = lockHolder(cluster.queueDirectory(1, "stalled"));
            try {
                signal(holder, "STOP");
                long stalledAt = System.nanoTime();
                write(stalledAppender, "stalled", 5, 25); // the follower's writer for 'stalled' now waits on the lock
                // ... and more than its 2 MiB ring holds: the follower leaves the subscription unread for a while, then
                // passes that queue's frames over (to fetch them again later), so that the other queue is not held up
                byte[] kilobyte = new byte[1024];
                for (int i = 0; i < 4 * 1024; i++) {
                    stalledAppender.write(kilobyte);
                }
                long deadline = stalledAt + TimeUnit.MILLISECONDS.toNanos(STALL_MILLIS);
                int written = 5;
                while (System.nanoTime() < deadline) {
                    write(ordersAppender, "orders", written, written + 10);
                    written += 10;
                    long last = orders.lastIndex();
                    assertTrue(TestCluster.await(Duration.ofSeconds(2), () -> lastIndex(follower, 1) == last),
                            () -> "'orders' stopped replicating while 'stalled' waited on the lock: " + follower.status());
                }
                assertEquals(stalledBefore, lastIndex(follower, 0), "nothing is written to 'stalled' while the lock is held");
                QueueStatus.PeerProgress seenByLeader = leader.status().queues().get(1).peers().get(0);
                assertTrue(seenByLeader.connected(), "the leader lost the follower's session (heartbeats stopped?): " + seenByLeader);
                assertEquals(QueueStatus.State.LIVE, follower.status().queues().get(1).state());
                assertEquals(QueueStatus.State.CATCHING_UP, follower.status().queues().get(0).state(),
                        "a queue whose writer is blocked does not report LIVE (readiness)");
                assertTrue(follower.stateDetail("stalled").contains("blocked"), () -> "no word of the blocked writer: '"
                        + follower.stateDetail("stalled") + "'");
                // the admin endpoint says the same while it lasts: blocked writer, the resync it forced, in JSON
                JsonNode status = followerAdmin.status();
                JsonNode during = AdminEndpoint.queue(status, "stalled");
                assertEquals("CATCHING_UP", during.path("state").asText(), during::toString);
                assertTrue(during.path("stateDetail").asText().contains("blocked in the store"), during::toString);
                assertTrue(during.path("writer").path("blockedMillis").asLong() >= 1_000, during::toString);
                assertTrue(during.path("writer").path("stalls").asLong() >= 1, during::toString);
                assertRecent(during.path("writer").path("lastStallAt"));
                assertTrue(during.path("resyncs").path("count").asLong() >= 1, during::toString);
                assertEquals("WRITER_BEHIND", during.path("resyncs").path("lastCause").asText(), during::toString);
                assertTrue(during.path("resyncs").path("lastDetail").asText().contains("writer has been behind"), during::toString);
                assertRecent(during.path("resyncs").path("lastAt"));
                JsonNode other = AdminEndpoint.queue(status, "orders");
                assertEquals(0, other.path("resyncs").path("count").asLong(), other::toString);
                assertEquals(0, other.path("writer").path("stalls").asLong(), other::toString);
                assertTrue(other.path("resyncs").path("lastCause").isNull(), other::toString);
            } finally {
                release(holder);
            }
            long stalledLast = stalled.lastIndex();
            assertTrue(TestCluster.await(WAIT, () -> lastIndex(follower, 0) == stalledLast),
                    () -> "'stalled' did not resume once the lock was released: " + follower.status() + " " + follower.stateDetail("stalled"));
            long ordersLast = orders.lastIndex();
            assertTrue(TestCluster.await(WAIT, () -> follower.status().queues().get(1).lastIndex() == ordersLast
                    && follower.status().queues().get(0).state() == QueueStatus.State.LIVE));
            // what remains once it recovered: LIVE, nothing blocked or to explain, the stall and the resync counted
            JsonNode after = AdminEndpoint.queue(followerAdmin.status(), "stalled");
            assertEquals("LIVE", after.path("state").asText(), after::toString);
            assertEquals("", after.path("stateDetail").asText(), after::toString);
            assertTrue(after.path("writer").path("blockedMillis").asLong() < 1_000, after::toString);
            assertTrue(after.path("writer").path("stalls").asLong() >= 1, after::toString);
            assertTrue(after.path("resyncs").path("count").asLong() >= 1, after::toString);
            assertEquals("WRITER_BEHIND", after.path("resyncs").path("lastCause").asText(), after::toString);
            }
        }
        assertSameContents(cluster, "stalled");
        assertSameContents(cluster, "orders");
    }

    @Test
    void aRoleChangeWhileOneQueuesWriterIsBlockedDoesNotHoldUpTheOthers() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("stalled", AckMode.ASYNC),
                TestCluster.queue("orders", AckMode.ASYNC)));
        try (ReplicationNode first = ReplicationNode.start(cluster.config(0));
             ReplicationNode second = ReplicationNode.start(cluster.config(1))) {
            first.promote(1);
            second.follow("replica-0", 1);
            long stalledLast;
            try (EnterpriseQueue stalled = EnterpriseQueue.builder(cluster.queueDirectory(0, "stalled")).build();
                 QueueAppender stalledAppender = stalled.createAppender();
                 EnterpriseQueue orders = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender ordersAppender = orders.createAppender()) {
                write(stalledAppender, "stalled", 0, 5);
                write(ordersAppender, "orders", 0, 5);
                long stalledBefore = stalled.lastIndex();
                long ordersBefore = orders.lastIndex();
                assertTrue(TestCluster.await(WAIT, () -> lastIndex(second, 0) == stalledBefore && lastIndex(second, 1) == ordersBefore));

                Process holder = lockHolder(cluster.queueDirectory(1, "stalled"));
                try {
                    signal(holder, "STOP");
                    write(stalledAppender, "stalled", 5, 25); // the second node's writer for 'stalled' waits on the lock
                    stalledLast = stalled.lastIndex();
                    Thread.sleep(300); // the batch reached the blocked writer
                    // The operator's failover: fence the leader, promote the follower. The end scan of 'stalled' waits
                    // behind the blocked write; 'orders' takes its new role at once.
                    first.fence(2);
                    long promoting = System.nanoTime();
                    second.promote(2);
                    long promoteMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - promoting);
                    NodeStatus status = second.status();
                    assertEquals(QueueStatus.State.LIVE, status.queues().get(1).state(), () -> "'orders' did not take the new role: " + status);
                    assertEquals(QueueStatus.State.STOPPED, status.queues().get(0).state(),
                            () -> "'stalled' cannot have found its end while its writer waits on the lock: " + status);
                    assertTrue(promoteMillis < 10_000, "promote took " + promoteMillis + " ms");
                    try (EnterpriseQueue newOrders = EnterpriseQueue.builder(cluster.queueDirectory(1, "orders")).build();
                         QueueAppender newAppender = newOrders.createAppender()) {
                        newAppender.write("orders after failover".getBytes(StandardCharsets.UTF_8)); // writable at once
                    }
                    assertTrue(second.stateDetail("stalled").contains("last index"), () -> second.stateDetail("stalled"));
                    QueueStatus.Writer writer = second.status().queues().get(0).writer();
                    assertTrue(writer.blockedMillis() >= 1_000 && writer.stalls() >= 1, writer::toString);
                } finally {
                    release(holder);
                }
            }
            assertTrue(TestCluster.await(WAIT, () -> second.status().queues().get(0).state() == QueueStatus.State.LIVE
                    && lastIndex(second, 0) == stalledLast), () -> "'stalled' did not take the new role once released: "
                    + second.status() + " " + second.stateDetail("stalled"));
            QueueStatus.Writer writerAfter = second.status().queues().get(0).writer();
            assertTrue(writerAfter.blockedMillis() < 1_000 && writerAfter.stalls() >= 1, writerAfter::toString);
            first.follow("replica-1", 2);
            assertTrue(TestCluster.await(WAIT, () -> lastIndex(first, 1) == lastIndex(second, 1)
                    && lastIndex(first, 0) == lastIndex(second, 0)), () -> first.status() + " / " + second.status());
        }
        assertSameContents(cluster, "stalled");
        assertSameContents(cluster, "orders");
    }

    /** An ISO-8601 time of this test run (within the last 10 minutes). */
    private static void assertRecent(JsonNode isoTime) {
        assertTrue(isoTime.isTextual(), () -> "not a time: " + isoTime);
        Instant at = Instant.parse(isoTime.asText());
        assertTrue(Duration.between(at, Instant.now()).abs().toMinutes() < 10, () -> "not now: " + isoTime);
    }

    private static Process lockHolder(Path queueDirectory) throws Exception {
        Process holder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "@" + System.getProperty("qe.jvm.args.file"), "-cp", System.getProperty("java.class.path"),
                StalledLockHolderMain.class.getName(), queueDirectory.toString()).redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("LOCKED", out.readLine());
            return holder;
        } catch (Throwable t) {
            holder.destroyForcibly().waitFor();
            throw t;
        }
    }

    /** Continues the holder and lets it roll its excerpt back (its lock released); SIGKILL if it does not exit. */
    private static void release(Process holder) throws Exception {
        try {
            signal(holder, "CONT");
            try (OutputStream in = holder.getOutputStream()) {
                in.write('\n');
            }
            if (!holder.waitFor(20, TimeUnit.SECONDS)) {
                throw new AssertionError("the lock holder did not exit after release");
            }
        } finally {
            holder.destroyForcibly().waitFor();
        }
    }

    private static void signal(Process process, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill -" + signal);
    }

    private static long lastIndex(ReplicationNode node, int queue) {
        return node.status().queues().get(queue).lastIndex();
    }

    private static void write(QueueAppender appender, String prefix, int from, int to) {
        for (int i = from; i < to; i++) {
            appender.write((prefix + " " + i).getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void assertSameContents(TestCluster cluster, String queue) throws Exception {
        assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, queue)),
                QueueContents.read(cluster.queueDirectory(1, queue))));
    }
}
