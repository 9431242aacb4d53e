package io.queueenterprise.replication.node;

import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.config.NodeConfig;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Retention over real Chronicle cycle files: six hourly cycles written with a set clock, a queue instance kept open
 * throughout (as the engine keeps its own), and a leader's view of its followers from {@link NodeStatus}.
 */
@org.junit.jupiter.api.Tag("unit")
class RetentionTaskTest {
    static final long HOUR = 3_600_000L;
    /** 2026-01-01T00:00Z: the first cycle written; cycles 0..5 after it are hours 0..5. */
    static final long START = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();

    @TempDir
    Path tmp;
    Path dir;
    SingleChronicleQueue queue;
    final List<Long> firstIndexOfHour = new ArrayList<>();
    NodeStatus status;

    @BeforeEach
    void writeSixHourlyCycles() {
        dir = tmp.resolve("data/orders");
        SetTimeProvider time = new SetTimeProvider(START * 1_000_000L);
        queue = SingleChronicleQueueBuilder.binary(dir.toFile()).rollCycle(RollCycles.FAST_HOURLY).timeProvider(time).build();
        try (ExcerptAppender appender = queue.createAppender()) {
            for (int hour = 0; hour < 6; hour++) {
                time.currentTimeMillis(START + hour * HOUR + 1000);
                for (int i = 0; i < 10; i++) {
                    appender.writeText("hour " + hour + " excerpt " + i);
                    if (i == 0) {
                        firstIndexOfHour.add(appender.lastIndexAppended());
                    }
                }
            }
        }
        status = leaderWith(List.of());
    }

    @AfterEach
    void close() {
        queue.close();
    }

    static NodeStatus leaderWith(List<QueueStatus.PeerProgress> peers) {
        return new NodeStatus("replica-0", NodeStatus.Role.LEADER, 1, "replica-0", List.of(
                new QueueStatus("orders", QueueStatus.State.LIVE, -1, -1, -1, -1, peers, 0, 0)));
    }

    RetentionTask task(Optional<Duration> maxAge, Optional<Long> maxBytes, long nowMillis) {
        NodeConfig config = new NodeConfig(1, "replica-0", tmp.resolve("data"),
                List.of(new NodeConfig.Peer("replica-0", "127.0.0.1", 40100)), tmp.resolve("peer"),
                List.of(new NodeConfig.QueueSpec("orders", "FAST_HOURLY", NodeConfig.Encryption.NONE, AckMode.QUORUM,
                        Duration.ofSeconds(1), new NodeConfig.Retention(maxAge, maxBytes))),
                new NodeConfig.Admin("127.0.0.1", 0, tmp.resolve("token")), new NodeConfig.Metrics("127.0.0.1", 0),
                NodeConfig.IdleStrategySpec.SLEEPING);
        return new RetentionTask(config, () -> status, Clock.fixed(Instant.ofEpochMilli(nowMillis), ZoneOffset.UTC));
    }

    List<String> cycleFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".cq4")).sorted().toList();
        }
    }

    /** The first excerpt a fresh tailer reads, as the queue instance that stayed open sees it. */
    String firstExcerpt() {
        try (ExcerptTailer tailer = queue.createTailer()) {
            return tailer.readText();
        }
    }

    @Test
    void cyclesOlderThanMaxAgeGoTheCurrentOneStays() throws IOException {
        assertEquals(6, cycleFiles().size());
        // At 06:30, hours 0..3 ended more than 2 h ago; hour 4 ended 1.5 h ago; hour 5 is the newest.
        List<RetentionTask.Deletion> deleted = task(Optional.of(Duration.ofHours(2)), Optional.empty(), START + 6 * HOUR + HOUR / 2).runOnce();
        assertEquals(4, deleted.size(), deleted.toString());
        assertEquals(List.of("20260101-04F.cq4", "20260101-05F.cq4"), cycleFiles());
        assertEquals("hour 4 excerpt 0", firstExcerpt());
        assertEquals(firstIndexOfHour.get(4), queue.firstIndex(), "the instance open throughout sees the new first cycle");
        // Ten days later, only the newest cycle is left: never the current one, whatever the bound.
        task(Optional.of(Duration.ofHours(2)), Optional.empty(), START + 240 * HOUR).runOnce();
        assertEquals(List.of("20260101-05F.cq4"), cycleFiles());
    }

    @Test
    void aConnectedFollowerHoldsWhatItStillNeedsAgainstMaxAge() throws IOException {
        // replica-1 has acknowledged up to the middle of hour 2; replica-2 is far behind but not connected.
        status = leaderWith(List.of(
                new QueueStatus.PeerProgress("replica-1", true, firstIndexOfHour.get(2) + 4, 0, 0, QueueStatus.State.CATCHING_UP),
                new QueueStatus.PeerProgress("replica-2", false, firstIndexOfHour.get(0), 0, 0, QueueStatus.State.CATCHING_UP)));
        RetentionTask task = task(Optional.of(Duration.ofMinutes(1)), Optional.empty(), START + 7 * HOUR);
        List<RetentionTask.Deletion> deleted = task.runOnce();
        assertEquals(List.of("20260101-02F.cq4", "20260101-03F.cq4", "20260101-04F.cq4", "20260101-05F.cq4"), cycleFiles());
        assertTrue(deleted.stream().noneMatch(RetentionTask.Deletion::forced));
        assertEquals(3, task.counters().get("orders").heldBackCycles(), "hours 2, 3, 4 are past maxAge but needed");
        assertEquals(2, task.counters().get("orders").deletedFiles());
        assertEquals("hour 2 excerpt 0", firstExcerpt());
    }

    @Test
    void aFollowerThatHoldsNothingYetNeedsEveryCycle() throws IOException {
        status = leaderWith(List.of(new QueueStatus.PeerProgress("replica-1", true, -1, 60, 0, QueueStatus.State.CATCHING_UP)));
        assertEquals(List.of(), task(Optional.of(Duration.ofMinutes(1)), Optional.empty(), START + 7 * HOUR).runOnce());
        assertEquals(6, cycleFiles().size());
    }

    @Test
    void maxBytesForcesDeletingWhatAFollowerNeedsAndSaysSo() throws IOException {
        status = leaderWith(List.of(new QueueStatus.PeerProgress("replica-1", true, firstIndexOfHour.get(1), 0, 0, QueueStatus.State.CATCHING_UP)));
        long total;
        long newest;
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> cycles = files.filter(p -> p.toString().endsWith(".cq4")).sorted().toList();
            total = 0;
            for (Path p : cycles) {
                total += Files.size(p);
            }
            newest = Files.size(cycles.get(cycles.size() - 1));
        }
        // Room for three cycle files (they are the same size): hours 0, 1, 2 must go; 1 and 2 are needed: forced.
        long bound = total / 2;
        RetentionTask task = task(Optional.empty(), Optional.of(bound), START + 7 * HOUR);
        List<RetentionTask.Deletion> deleted = task.runOnce();
        assertEquals(List.of("20260101-03F.cq4", "20260101-04F.cq4", "20260101-05F.cq4"), cycleFiles());
        assertEquals(List.of(false, true, true), deleted.stream().map(RetentionTask.Deletion::forced).toList());
        assertEquals(2, task.counters().get("orders").forcedDeletions());
        // A bound smaller than one cycle file still keeps the newest.
        task(Optional.empty(), Optional.of(Math.max(1, newest / 4)), START + 7 * HOUR).runOnce();
        assertEquals(List.of("20260101-05F.cq4"), cycleFiles());
        assertEquals("hour 5 excerpt 0", firstExcerpt());
    }

    @Test
    void filesNotNamedByTheRollCycleAreLeftAlone() throws IOException {
        Files.writeString(dir.resolve("20260101-00F.cq4.bak"), "a copy someone made");
        Files.writeString(dir.resolve("notes.cq4"), "not a cycle file");
        task(Optional.of(Duration.ofMinutes(1)), Optional.empty(), START + 7 * HOUR).runOnce();
        assertEquals(List.of("20260101-05F.cq4", "notes.cq4"), cycleFiles());
        assertTrue(Files.exists(dir.resolve("20260101-00F.cq4.bak")));
    }
}
