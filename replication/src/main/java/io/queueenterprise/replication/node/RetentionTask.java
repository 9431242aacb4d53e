package io.queueenterprise.replication.node;

import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.config.NodeConfig;
import io.queueenterprise.replication.config.NodeConfig.QueueSpec;
import io.queueenterprise.replication.engine.RollCycleNames;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.RollingResourcesCache;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Retention of each queue's cycle files (docs/node-config.md, "Retention"), on every replica, on a background
 * thread of its own (never the replication thread). Per run and queue: cycle files whose cycle ended more than
 * {@code maxAge} ago, then the oldest while all cycle files together exceed {@code maxBytes}, are deleted, except
 * <ul>
 *   <li>the newest cycle file and any cycle not yet over by the clock (the current cycle), never;</li>
 *   <li>a cycle at or after the lowest durable index of the connected followers (from {@link NodeStatus}): a live
 *       follower still needs it to catch up. Age alone does not delete it (held back and counted); {@code maxBytes}
 *       does, because the disk bound protects the leader itself, and the deletion is counted as forced (the engine
 *       then reports {@code BEHIND_RETENTION} to that follower).</li>
 * </ul>
 * After deleting, Chronicle's shared directory listing is rescanned, so that every open instance (the engine's)
 * reports the new first index ({@code RetentionWithEngineTest}).
 */
public final class RetentionTask implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RetentionTask.class);
    private static final String SUFFIX = ".cq4";

    private final NodeConfig config;
    private final Supplier<NodeStatus> status;
    private final Clock clock;
    private final Map<String, Counters> counters = new LinkedHashMap<>();
    private volatile ScheduledExecutorService scheduler;

    /** What retention did to one queue since start; read by the metrics at scrape time. */
    public static final class Counters {
        final AtomicLong deletedFiles = new AtomicLong();
        final AtomicLong deletedBytes = new AtomicLong();
        final AtomicLong forcedDeletions = new AtomicLong();
        final AtomicLong heldBackCycles = new AtomicLong();

        public long deletedFiles() {
            return deletedFiles.get();
        }

        public long deletedBytes() {
            return deletedBytes.get();
        }

        /** Deletions of a cycle a connected follower still needed, forced by {@code maxBytes}. */
        public long forcedDeletions() {
            return forcedDeletions.get();
        }

        /** Cycles past {@code maxAge} kept at the last run because a connected follower still needs them. */
        public long heldBackCycles() {
            return heldBackCycles.get();
        }
    }

    /** One deleted cycle file. */
    public record Deletion(String queue, Path file, long bytes, boolean forced) {
    }

    public RetentionTask(NodeConfig config, Supplier<NodeStatus> status, Clock clock) {
        this.config = config;
        this.status = status;
        this.clock = clock;
        for (QueueSpec queue : config.queues()) {
            counters.put(queue.name(), new Counters());
        }
    }

    /** Runs now and then every {@code interval}, on a daemon thread of its own. */
    public synchronized void start(Duration interval) {
        if (scheduler != null) {
            throw new IllegalStateException("already started");
        }
        scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "qe-retention-" + config.nodeId());
            t.setDaemon(true);
            t.setPriority(Thread.MIN_PRIORITY);
            return t;
        });
        scheduler.scheduleWithFixedDelay(this::runLogged, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    public Map<String, Counters> counters() {
        return counters;
    }

    private void runLogged() {
        try {
            runOnce();
        } catch (RuntimeException e) { // keep the schedule: the next run may succeed (the queue directory appears)
            LOG.warn("retention run failed: {}", e.toString());
        }
    }

    /** One pass over every queue with a retention bound; returns what it deleted. */
    public synchronized List<Deletion> runOnce() {
        NodeStatus node = status.get();
        List<Deletion> deleted = new ArrayList<>();
        for (QueueSpec queue : config.queues()) {
            if (queue.retention().maxAge().isEmpty() && queue.retention().maxBytes().isEmpty()) {
                continue;
            }
            Path dir = config.dataDirectory().resolve(queue.name());
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try {
                deleted.addAll(apply(queue, dir, neededIndex(node, queue.name())));
            } catch (IOException e) {
                LOG.warn("retention of queue {} in {} failed: {}", queue.name(), dir, e.toString());
            }
        }
        return deleted;
    }

    /** The lowest durable index of connected followers of this queue, when this node leads it and has any. */
    private static OptionalLong neededIndex(NodeStatus node, String queue) {
        return node.queues().stream().filter(q -> q.name().equals(queue)).findFirst().stream()
                .flatMap(q -> q.peers().stream()).filter(QueueStatus.PeerProgress::connected)
                .mapToLong(QueueStatus.PeerProgress::durableIndex).min();
    }

    private record CycleFile(Path path, int cycle, long bytes) {
    }

    private List<Deletion> apply(QueueSpec queue, Path dir, OptionalLong neededIndex) throws IOException {
        RollCycle rollCycle = RollCycleNames.of(queue.rollCycle());
        RollingResourcesCache names = new RollingResourcesCache(rollCycle, rollCycle.defaultEpoch(),
                name -> dir.resolve(name + SUFFIX).toFile(), file -> file.getName().substring(0, file.getName().length() - SUFFIX.length()));
        List<CycleFile> files = new ArrayList<>();
        try (Stream<Path> list = Files.list(dir)) {
            for (Path p : (Iterable<Path>) list.filter(f -> f.getFileName().toString().endsWith(SUFFIX))::iterator) {
                String name = p.getFileName().toString();
                int cycle;
                try {
                    cycle = names.parseCount(name.substring(0, name.length() - SUFFIX.length()));
                } catch (RuntimeException notACycleFile) {
                    continue; // not named by this roll cycle: not ours to delete
                }
                files.add(new CycleFile(p, cycle, Files.size(p)));
            }
        }
        if (files.size() < 2) {
            return List.of(); // the newest cycle is never deleted
        }
        files.sort(Comparator.comparingInt(CycleFile::cycle));
        long now = clock.millis();
        int currentCycle = (int) ((now - rollCycle.defaultEpoch()) / rollCycle.lengthInMillis());
        // A follower with durable index -1 holds nothing yet and needs every cycle.
        int neededCycle = neededIndex.isEmpty() ? Integer.MAX_VALUE
                : neededIndex.getAsLong() < 0 ? Integer.MIN_VALUE : rollCycle.toCycle(neededIndex.getAsLong());
        long total = files.stream().mapToLong(CycleFile::bytes).sum();
        long maxBytes = queue.retention().maxBytes().orElse(Long.MAX_VALUE);
        long maxAgeMillis = queue.retention().maxAge().map(Duration::toMillis).orElse(Long.MAX_VALUE);
        Counters counter = counters.get(queue.name());
        List<Deletion> deleted = new ArrayList<>();
        long heldBack = 0;
        for (CycleFile file : files.subList(0, files.size() - 1)) {
            if (file.cycle() >= currentCycle) {
                break;
            }
            long cycleEnd = rollCycle.defaultEpoch() + (file.cycle() + 1L) * rollCycle.lengthInMillis();
            boolean tooOld = now - cycleEnd > maxAgeMillis;
            boolean overSize = total > maxBytes;
            if (!tooOld && !overSize) {
                break; // files are oldest first: nothing later is older or needed for the size bound
            }
            boolean neededByFollower = file.cycle() >= neededCycle;
            if (neededByFollower && !overSize) {
                heldBack++;
                continue;
            }
            Files.deleteIfExists(file.path());
            total -= file.bytes();
            deleted.add(new Deletion(queue.name(), file.path(), file.bytes(), neededByFollower));
            counter.deletedFiles.incrementAndGet();
            counter.deletedBytes.addAndGet(file.bytes());
            if (neededByFollower) {
                counter.forcedDeletions.incrementAndGet();
                LOG.warn("queue {}: maxBytes forced deleting {}, which a connected follower"
                        + " still needs (durable index {})", queue.name(), file.path().getFileName(), neededIndex.getAsLong());
            }
        }
        counter.heldBackCycles.set(heldBack);
        if (!deleted.isEmpty()) {
            refreshDirectoryListing(dir, rollCycle);
        }
        return deleted;
    }

    /**
     * Chronicle keeps each queue's lowest and highest cycle in metadata.cq4t, shared by every instance in every
     * process; an instance that only reads that listing (the engine's, asked for its first index) would go on
     * reporting a deleted cycle. A rescan after deleting updates the shared listing for all of them.
     */
    private static void refreshDirectoryListing(Path dir, RollCycle rollCycle) {
        try (SingleChronicleQueue queue = SingleChronicleQueueBuilder.single(dir.toFile()).rollCycle(rollCycle).build()) {
            queue.refreshDirectoryListing();
        } catch (RuntimeException e) { // e.g. a foreign *.cq4 file Chronicle cannot parse: the deletions stand
            LOG.warn("retention: Chronicle could not rescan {}: {}", dir, e.toString());
        }
    }

    @Override
    public void close() { // not synchronized: a run in progress holds the monitor; shutdownNow interrupts it
        ScheduledExecutorService scheduler = this.scheduler;
        if (scheduler != null) {
            scheduler.shutdownNow();
            try {
                scheduler.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
