package io.queueenterprise.replication;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.ReplicaStore;
import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A queue whose opening blocks (a writer SIGKILLed mid-excerpt left its write lock, and the exclusive lock on the
 * metadata Chronicle needs to recover it is held by another process: Chronicle waits 10 s, then fails) does not stop
 * the node: its duty cycle keeps driving the media driver and the other queue replicates
 * meanwhile; the blocked queue is retried, joins once the lock is gone, and catches up.
 */
@org.junit.jupiter.api.Tag("process")
class BlockedQueueOpeningTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path tmp;

    @Test
    void aQueueThatCannotBeOpenedYetDoesNotStopTheOthers() throws Exception {
        // "stuck" first: opened in order, it would hold up "orders" if opening ran on the duty thread
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("stuck", AckMode.ASYNC),
                TestCluster.queue("orders", AckMode.ASYNC)));
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0))) {
            leader.promote(1);
            try (EnterpriseQueue stuck = EnterpriseQueue.builder(cluster.queueDirectory(0, "stuck")).build();
                 QueueAppender stuckAppender = stuck.createAppender();
                 EnterpriseQueue orders = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender ordersAppender = orders.createAppender()) {
                try (ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
                    follower.follow("replica-0", 1);
                    write(stuckAppender, "stuck", 0, 10);
                    write(ordersAppender, "orders", 0, 10);
                    assertTrue(TestCluster.await(WAIT, () -> follower.status().queues().get(0).lastIndex() == stuck.lastIndex()
                            && follower.status().queues().get(1).lastIndex() == orders.lastIndex()));
                }

                // A writer SIGKILLed mid-excerpt in the follower's copy: an incomplete header and a dead process's write
                // lock, which Chronicle's open recovers under the exclusive lock on metadata.cq4t ...
                Process writer = childJvm(KilledWriterMain.class, cluster.queueDirectory(1, "stuck"));
                try (BufferedReader out = new BufferedReader(new InputStreamReader(writer.getInputStream(), StandardCharsets.UTF_8))) {
                    assertEquals("WRITING", out.readLine());
                } finally {
                    writer.destroyForcibly().waitFor();
                }
                // ... which another process holds (stalled inside Chronicle, say): the open waits 10 s, then fails
                Process holder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp", System.getProperty("java.class.path"), MetadataLockHolderMain.class.getName(),
                        cluster.queueDirectory(1, "stuck").toString()).redirectErrorStream(true).start();
                CompletableFuture<ReplicationNode> restart = null;
                try {
                    try (BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))) {
                        assertEquals("LOCKED", out.readLine());
                    }
                    long locked = System.nanoTime();
                    restart = CompletableFuture.supplyAsync(() -> ReplicationNode.start(cluster.config(1)));
                    write(ordersAppender, "orders", 10, 60);
                    long last = orders.lastIndex();
                    try (ReplicaStore followerOrders = ReplicaStore.open(cluster.queueDirectory(1, "orders"), RollCycles.FAST_DAILY)) {
                        // within Chronicle's 10 s wait on the other queue: the node replicates while that one is blocked
                        assertTrue(TestCluster.await(Duration.ofSeconds(8), () -> followerOrders.lastIndex() == last),
                                "orders did not replicate while 'stuck' could not be opened");
                    }
                    assertTrue(!restart.isDone(), "the replication went on while the node's first open of 'stuck' was blocked");
                    assertTrue(System.nanoTime() - locked < TimeUnit.SECONDS.toNanos(10), "the check ran inside the blocked open");
                } catch (Throwable failure) {
                    holder.destroyForcibly().waitFor();
                    if (restart != null) { // the node still starting must not outlive the test (its Aeron directory)
                        try {
                            restart.get(WAIT.toSeconds(), TimeUnit.SECONDS).close();
                        } catch (Exception e) {
                            failure.addSuppressed(e);
                        }
                    }
                    throw failure;
                }
                holder.destroyForcibly().waitFor(); // SIGKILL: the kernel drops its lock
                try (ReplicationNode restarted = restart.get(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                    write(stuckAppender, "stuck", 10, 15);
                    long last = stuck.lastIndex();
                    assertTrue(TestCluster.await(WAIT, () -> restarted.status().queues().get(0).lastIndex() == last),
                            () -> "'stuck' did not join once it could be opened: " + restarted.status() + " "
                                    + restarted.stateDetail("stuck"));
                    assertEquals(0, restarted.drops().get(io.queueenterprise.replication.engine.DropReason.UNEXPECTED),
                            "frames for the queue still opening are ignored, not counted as protocol faults");
                }
            }
        }
        assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, "stuck")),
                QueueContents.read(cluster.queueDirectory(1, "stuck"))));
        assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, "orders")),
                QueueContents.read(cluster.queueDirectory(1, "orders"))));
    }

    private static Process childJvm(Class<?> main, Path argument) throws java.io.IOException {
        return new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "@" + System.getProperty("qe.jvm.args.file"), "-cp", System.getProperty("java.class.path"), main.getName(),
                argument.toString()).redirectErrorStream(true).start();
    }

    private static void write(QueueAppender appender, String prefix, int from, int to) {
        for (int i = from; i < to; i++) {
            appender.write((prefix + " " + i).getBytes(StandardCharsets.UTF_8));
        }
    }
}
