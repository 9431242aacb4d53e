package io.queueenterprise.replication;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replica's stored excerpt bytes changed on disk while it was stopped (a flipped byte in its cycle file). A node
 * restarted as a follower moves everything from the damaged excerpt on to the quarantine (the original files kept
 * whole) and fetches it again from its leader; one restarted in another role (here fenced, then told to follow) has
 * no one to fetch from at start: it reports the queue CORRUPTED naming the excerpt, and neither acknowledges nor
 * takes anything for it.
 */
@org.junit.jupiter.api.Tag("integration")
class FollowerCorruptedCycleFileTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String QUEUE = "orders";
    private static final int EXCERPTS = 200;

    @TempDir
    Path tmp;

    private static byte[] payload(int i) {
        return String.format("payload-%04d-abcdefghijklmnopqrstuvwxyz", i).getBytes(StandardCharsets.US_ASCII);
    }

    /** Writes the test's excerpts on the leader and waits until the follower holds them all; returns excerpt 42's index. */
    private static long writeAllAndAwaitTheFollower(EnterpriseQueue queue, QueueAppender appender, ReplicationNode follower)
            throws InterruptedException {
        long index42 = -1;
        for (int i = 0; i < EXCERPTS; i++) {
            long index = appender.write(payload(i));
            index42 = i == 42 ? index : index42;
        }
        long last = queue.lastIndex();
        assertTrue(TestCluster.await(WAIT, () -> follower.status().queues().get(0).lastIndex() == last));
        return index42;
    }

    @Test
    void aFollowersDamagedCopyIsMovedAsideAndFetchedAgainFromTheLeader() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue(QUEUE, AckMode.ASYNC)));
        long damagedIndex;
        Path reportedQuarantine;
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0))) {
            leader.promote(1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, QUEUE)).build();
                 QueueAppender appender = queue.createAppender()) {
                try (ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
                    follower.follow("replica-0", 1);
                    damagedIndex = writeAllAndAwaitTheFollower(queue, appender, follower);
                    assertEquals(QueueStatus.Quarantines.NONE, follower.status().queues().get(0).quarantines());
                }
                flipOneByteOf(cluster.queueDirectory(1, QUEUE), payload(42));

                try (ReplicationNode restarted = ReplicationNode.start(cluster.config(1));
                     AdminEndpoint admin = AdminEndpoint.start(restarted)) {
                    appender.write(payload(EXCERPTS)); // the leader goes on
                    long last = queue.lastIndex();
                    assertTrue(TestCluster.await(WAIT, () -> restarted.status().queues().get(0).lastIndex() == last
                                    && restarted.status().queues().get(0).state() == QueueStatus.State.LIVE),
                            () -> "the damaged copy was not fetched again: " + restarted.status() + " " + restarted.stateDetail(QUEUE));
                    // LIVE again, and the status still says what was moved aside at start, where, why and when
                    JsonNode quarantines = AdminEndpoint.queue(admin.status(), QUEUE).path("quarantines");
                    assertEquals(1, quarantines.path("count").asLong(), quarantines::toString);
                    assertEquals("DAMAGED", quarantines.path("lastReason").asText(), quarantines::toString);
                    assertEquals(EXCERPTS - 42, quarantines.path("lastExcerpts").asLong(), quarantines::toString);
                    assertTrue(quarantines.path("lastDetail").asText().contains("0x" + Long.toHexString(damagedIndex)), quarantines::toString);
                    assertTrue(Duration.between(Instant.parse(quarantines.path("lastAt").asText()), Instant.now()).toMinutes() < 10,
                            quarantines::toString);
                    reportedQuarantine = Path.of(quarantines.path("lastDirectory").asText());
                }
            }
        }
        assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, QUEUE)),
                QueueContents.read(cluster.queueDirectory(1, QUEUE))), "the refetched copy equals the leader's");
        Path quarantine;
        try (Stream<Path> entries = Files.list(cluster.queueDirectory(1, QUEUE).resolve("quarantine"))) {
            quarantine = entries.findFirst().orElseThrow();
        }
        assertEquals(quarantine.toAbsolutePath(), reportedQuarantine, "the status names the quarantine folder");
        String readme = Files.readString(quarantine.resolve("README.txt"));
        assertTrue(readme.contains("damaged") && readme.contains("0x" + Long.toHexString(damagedIndex)), readme);
        assertTrue(Files.size(quarantine.resolve("damaged-excerpts.bin")) > 0, "the excerpts from the damaged one on were saved");
        byte[] flipped = payload(42);
        flipped[flipped.length - 1] ^= 0x01;
        assertTrue(containsInSomeCycleFile(quarantine.resolve("original"), flipped), "the original, damaged file is kept whole");
    }

    /**
     * Issue 20: a follower's cycle file cut short while it was stopped (at excerpt 120's header) used to start as a
     * copy that simply ended there. Its high-water mark says more was stored: the node moves the copy aside from the
     * last excerpt it holds whole and fetches the rest again from its leader.
     */
    @Test
    void aFollowersCopyCutShortIsFetchedAgainFromTheLeader() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue(QUEUE, AckMode.ASYNC)));
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0))) {
            leader.promote(1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, QUEUE)).build();
                 QueueAppender appender = queue.createAppender()) {
                long first;
                try (ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
                    follower.follow("replica-0", 1);
                    writeAllAndAwaitTheFollower(queue, appender, follower);
                    first = queue.firstIndex();
                }
                cutBefore(cluster.queueDirectory(1, QUEUE), payload(120));

                try (ReplicationNode restarted = ReplicationNode.start(cluster.config(1));
                     AdminEndpoint admin = AdminEndpoint.start(restarted)) {
                    appender.write(payload(EXCERPTS));
                    long last = queue.lastIndex();
                    assertTrue(TestCluster.await(WAIT, () -> restarted.status().queues().get(0).lastIndex() == last
                                    && restarted.status().queues().get(0).state() == QueueStatus.State.LIVE),
                            () -> "the short copy was not fetched again: " + restarted.status() + " " + restarted.stateDetail(QUEUE));
                    JsonNode quarantines = AdminEndpoint.queue(admin.status(), QUEUE).path("quarantines");
                    assertEquals(1, quarantines.path("count").asLong(), quarantines::toString);
                    assertEquals("DAMAGED", quarantines.path("lastReason").asText(), quarantines::toString);
                    String detail = quarantines.path("lastDetail").asText();
                    assertTrue(detail.contains("ends at 0x" + Long.toHexString(first + 119)) && detail.contains("high-water mark"),
                            detail);
                }
            }
        }
        assertNull(QueueContents.difference(QueueContents.read(cluster.queueDirectory(0, QUEUE)),
                QueueContents.read(cluster.queueDirectory(1, QUEUE))), "the refetched copy equals the leader's");
    }

    /** Truncates the cycle file holding {@code marker} just before that excerpt's 4-byte header (the node is stopped). */
    private static void cutBefore(Path queueDirectory, byte[] marker) throws Exception {
        try (Stream<Path> files = Files.list(queueDirectory)) {
            for (Path cycle : files.filter(f -> f.toString().endsWith(".cq4")).toList()) {
                byte[] content = Files.readAllBytes(cycle);
                for (int at = 0; at + marker.length <= content.length; at++) {
                    if (java.util.Arrays.equals(content, at, at + marker.length, marker, 0, marker.length)) {
                        try (RandomAccessFile file = new RandomAccessFile(cycle.toFile(), "rw")) {
                            file.setLength(at - 4);
                        }
                        return;
                    }
                }
            }
        }
        throw new AssertionError("marker not found");
    }

    @Test
    void aFlippedByteInACopyThatCannotRefetchIsReportedAndNeverAcknowledged() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue(QUEUE, AckMode.ASYNC)));
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0))) {
            leader.promote(1);
            long damagedIndex;
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, QUEUE)).build();
                 QueueAppender appender = queue.createAppender()) {
                try (ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
                    follower.follow("replica-0", 1);
                    damagedIndex = writeAllAndAwaitTheFollower(queue, appender, follower);
                    follower.fence(1); // restarted fenced: no leader to fetch a damaged copy from
                }
                flipOneByteOf(cluster.queueDirectory(1, QUEUE), payload(42));

                try (ReplicationNode restarted = ReplicationNode.start(cluster.config(1))) {
                    assertEquals(QueueStatus.State.CORRUPTED, restarted.status().queues().get(0).state());
                    restarted.follow("replica-0", 1); // told to follow later: the copy stays as found, for a human
                    String detail = restarted.stateDetail(QUEUE);
                    assertTrue(detail.contains("0x" + Long.toHexString(damagedIndex)), "names the damaged excerpt: " + detail);
                    appender.write(payload(EXCERPTS)); // the leader goes on
                    long last = queue.lastIndex();
                    assertTrue(TestCluster.await(WAIT, () -> leader.status().queues().get(0).peers().get(0).connected()),
                            "the restarted follower has a session with the leader");
                    Thread.sleep(1_000); // time for HELLO, DESCRIPTOR, DATA and acks, were any sent
                    QueueStatus onLeader = leader.status().queues().get(0);
                    assertEquals(-1, onLeader.peers().get(0).durableIndex(), "the damaged copy acknowledged nothing: " + onLeader);
                    assertTrue(restarted.status().queues().get(0).lastIndex() < last, "it took nothing more");
                    assertEquals(QueueStatus.State.CORRUPTED, restarted.status().queues().get(0).state());
                    assertEquals(0, restarted.drops().get(io.queueenterprise.replication.engine.DropReason.UNEXPECTED),
                            "data the leader streams for the damaged queue is ignored, not counted as a protocol fault");
                }
            }
        }
    }

    @Test
    void anUndamagedFollowerRestartsAndResumesAsBefore() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 2, List.of(TestCluster.queue(QUEUE, AckMode.ASYNC)));
        try (ReplicationNode leader = ReplicationNode.start(cluster.config(0))) {
            leader.promote(1);
            try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(0, QUEUE)).build();
                 QueueAppender appender = queue.createAppender()) {
                resumeAfterARestart(cluster, queue, appender);
            }
        }
    }

    private static void resumeAfterARestart(TestCluster cluster, EnterpriseQueue queue, QueueAppender appender) throws Exception {
        try (ReplicationNode follower = ReplicationNode.start(cluster.config(1))) {
            follower.follow("replica-0", 1);
            for (int i = 0; i < EXCERPTS; i++) {
                appender.write(payload(i));
            }
            long last = queue.lastIndex();
            assertTrue(TestCluster.await(WAIT, () -> follower.status().queues().get(0).lastIndex() == last));
        }
        appender.write(payload(EXCERPTS));
        long last = queue.lastIndex();
        try (ReplicationNode restarted = ReplicationNode.start(cluster.config(1))) {
            assertTrue(TestCluster.await(WAIT, () -> restarted.status().queues().get(0).lastIndex() == last
                    && restarted.status().queues().get(0).state() == QueueStatus.State.LIVE), () -> restarted.status().toString());
            assertTrue(Files.size(cluster.queueDirectory(1, QUEUE).resolve("replica-checksums.bin")) >= 12L * EXCERPTS,
                    "the checksums of what it stored were recorded");
        }
    }

    private static boolean containsInSomeCycleFile(Path directory, byte[] marker) throws Exception {
        try (Stream<Path> files = Files.list(directory)) {
            for (Path cycle : files.filter(f -> f.toString().endsWith(".cq4")).toList()) {
                byte[] content = Files.readAllBytes(cycle);
                for (int at = 0; at + marker.length <= content.length; at++) {
                    if (java.util.Arrays.equals(content, at, at + marker.length, marker, 0, marker.length)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** Flips one bit of the first occurrence of {@code marker} in the queue's cycle files (the node is stopped). */
    private static void flipOneByteOf(Path queueDirectory, byte[] marker) throws Exception {
        List<Path> cycles;
        try (Stream<Path> files = Files.list(queueDirectory)) {
            cycles = files.filter(f -> f.toString().endsWith(".cq4")).toList();
        }
        for (Path cycle : cycles) {
            byte[] content = Files.readAllBytes(cycle);
            for (int at = 0; at + marker.length <= content.length; at++) {
                if (java.util.Arrays.equals(content, at, at + marker.length, marker, 0, marker.length)) {
                    try (RandomAccessFile file = new RandomAccessFile(cycle.toFile(), "rw")) {
                        file.seek(at + marker.length - 1);
                        file.write(content[at + marker.length - 1] ^ 0x01);
                    }
                    return;
                }
            }
        }
        throw new AssertionError("marker not found in " + cycles);
    }
}
