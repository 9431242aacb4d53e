package io.queueenterprise.replication;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower whose whole process stalls for longer than Aeron's default 10 s liveness (SIGSTOP here; in production a
 * long GC pause, or Chronicle waiting out a dead writer's lock on the duty thread) catches up once it runs again:
 * the embedded client and driver, which share the duty thread, must not have declared each other dead meanwhile.
 */
@org.junit.jupiter.api.Tag("process")
@org.junit.jupiter.api.Tag("slow")
class LongStallTest {
    private static final long STALL_MILLIS = 12_000;

    @TempDir
    Path tmp;

    @Test
    void aFollowerStalledLongerThanAeronsDefaultLivenessCatchesUp() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue("orders", AckMode.ASYNC)));
        String spec = "orders:ASYNC:FAST_DAILY";
        Path logs = Path.of("target", "long-stall-logs");
        try (NodeProcess leader = NodeProcess.start(cluster, 0, spec, logs.resolve("node-0.log"));
             NodeProcess follower = NodeProcess.start(cluster, 1, spec, logs.resolve("node-1.log"))) {
            leader.command("promote 1");
            follower.command("follow replica-0 1");
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, "orders")).build();
                 QueueAppender appender = queue.createAppender()) {
                appender.write(new byte[]{1});
                assertTrue(TestCluster.await(Duration.ofSeconds(60), () -> follower.lastIndexOrUnknown() == queue.lastIndex()), "replicating before the stall");
                follower.signal("STOP");
                try {
                    Thread.sleep(STALL_MILLIS);
                    for (int i = 0; i < 100; i++) {
                        appender.write(new byte[]{2, (byte) i});
                    }
                } finally {
                    follower.signal("CONT");
                }
                long last = queue.lastIndex();
                assertTrue(TestCluster.await(Duration.ofSeconds(60), () -> follower.lastIndexOrUnknown() == last),
                        () -> "the follower did not catch up after a " + STALL_MILLIS + " ms stall: " + status(follower));
            }
        }
        assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, "orders")),
                QueueContents.read(cluster.queueDirectory(1, "orders"))));
    }

    private static String status(NodeProcess node) {
        try {
            return node.status().toString();
        } catch (Exception e) {
            return "no status: " + e;
        }
    }
}
