package io.queueenterprise.replication.engine;

import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.QueueStatus.QuarantineReason;
import io.queueenterprise.replication.ReplicationException;
import net.openhft.chronicle.queue.RollCycle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.DataOutputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.stream.Stream;

/**
 * Moves a replica's divergent excerpts (those after the last index it shares with its new leader: written under a
 * term the leader's history does not continue, never acknowledged by a quorum) aside, for forensics: never served,
 * never silently deleted.
 *
 * <p>Chronicle cannot cut a cycle file at an index, so the queue is rebuilt: (1) the divergent raw excerpts are
 * written to {@code <queue>/quarantine/<time>/divergent-excerpts.bin} (i64 index, i32 length, bytes; still sealed)
 * with a summary, and every original file is copied to {@code .../original/}; (2) a new queue is built beside the
 * old one with the excerpts up to the shared index written at the same indexes, plus the descriptor, role and term
 * files; (3) the directories are swapped by renames. Cost: a copy of the whole queue, once per divergence (a
 * failover with unreplicated writes), not on any steady path. A crash mid-way leaves {@code .<name>.old-*} or
 * {@code .<name>.rebuild-*} beside the queue; {@link #recoverInterruptedRebuild} puts the original back at start.
 * Library processes that have the directory open must reopen it.
 */
final class Quarantine {
    private static final Logger LOG = LoggerFactory.getLogger(Quarantine.class);
    static final String DIR_NAME = "quarantine";
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final List<String> KEPT_FILES = List.of("queue-enterprise.properties", "queue-enterprise.role", TermHistory.FILE_NAME);

    private Quarantine() {
    }

    /** Per quarantine folder: what the status reports of it (reason, time, excerpts, detail), as properties. */
    static final String SUMMARY_FILE = "quarantine.properties";

    /** Truncates the queue of {@code store} after {@code sharedEnd} (-1: everything); returns the reopened store. */
    static ReplicaStore truncateAfter(ReplicaStore store, String queueName, long sharedEnd) {
        return truncateAfter(store, queueName, sharedEnd, QuarantineReason.DIVERGENT, null);
    }

    /**
     * Truncates the queue of {@code store} after {@code keptEnd} (-1: everything), for {@code reason} ({@code detail}:
     * what was found, written into the README); returns the reopened store. A damaged copy's excerpts after
     * {@code keptEnd} are saved as far as they can still be read; the original files are kept whole in any case.
     */
    static ReplicaStore truncateAfter(ReplicaStore store, String queueName, long keptEnd, QuarantineReason reason, String detail) {
        long sharedEnd = keptEnd;
        String readProblem = null;
        Path dir = store.path();
        RollCycle rollCycle = store.rollCycle();
        byte[] descriptorBytes = store.descriptorBytes();
        Instant now = Instant.now();
        String stamp = STAMP.format(now);
        Path target = dir.resolve(DIR_NAME).resolve(stamp);
        Path parent = dir.getParent();
        Path rebuild = parent.resolve("." + dir.getFileName() + ".rebuild-" + stamp);
        Path old = parent.resolve("." + dir.getFileName() + ".old-" + stamp);
        long moved = 0;
        long firstMoved = -1;
        long lastMoved = -1;
        try {
            Files.createDirectories(target);
            // 1. the divergent excerpts, raw, and the original files
            String excerptsFile = reason == QuarantineReason.DAMAGED ? "damaged-excerpts.bin" : "divergent-excerpts.bin";
            try (ReplicaStore.RawTailer tailer = store.rawTailer();
                 DataOutputStream out = new DataOutputStream(new BufferedOutputStream(
                         Files.newOutputStream(target.resolve(excerptsFile))))) {
                if (sharedEnd < 0 || !tailer.moveAfter(sharedEnd)) {
                    tailer.toStart();
                }
                int n;
                while ((n = nextReadable(tailer, reason)) >= 0) {
                    if (tailer.index() <= sharedEnd) {
                        continue;
                    }
                    out.writeLong(tailer.index());
                    out.writeInt(n);
                    out.write(tailer.bytes(), 0, n);
                    moved++;
                    if (firstMoved < 0) {
                        firstMoved = tailer.index();
                    }
                    lastMoved = tailer.index();
                }
            } catch (UnreadableExcerptException e) {
                readProblem = e.getMessage(); // a damaged copy: what follows is in original/ as it was
            }
            store.close();
            copyOriginals(dir, target.resolve("original"));
            String why = reason == QuarantineReason.DAMAGED
                    ? "Excerpts of queue '" + queueName + "' after index 0x" + Long.toHexString(sharedEnd) + ", the last one"
                    + " this replica read whole and, where recorded, with the checksum it had when written.\n"
                    + "The copy was damaged on disk: " + detail + ".\nThey are not served; the node fetches them again from"
                    + " its leader. " + moved + " excerpts could still be read, 0x" + Long.toHexString(firstMoved) + " .. 0x"
                    + Long.toHexString(lastMoved) + (readProblem == null ? "" : "; reading stopped: " + readProblem) + ".\n"
                    : "Excerpts of queue '" + queueName + "' after index 0x" + Long.toHexString(sharedEnd) + ", the last one"
                    + " this replica shared with its new leader.\nThey were never acknowledged by a quorum and are not served. "
                    + moved + " excerpts, 0x" + Long.toHexString(firstMoved) + " .. 0x" + Long.toHexString(lastMoved) + ".\n";
            Files.writeString(target.resolve("README.txt"), why
                    + excerptsFile + ": per excerpt i64 index, i32 length, the stored (sealed) bytes; big-endian.\n"
                    + "original/: the queue's files as they were before the rebuild.\n", StandardCharsets.UTF_8);
            writeSummary(target, reason, now, moved, sharedEnd, reason == QuarantineReason.DAMAGED ? detail : null);

            // 2. the rebuilt queue: the shared excerpts at the same indexes
            try (ReplicaStore source = ReplicaStore.open(dir, rollCycle);
                 ReplicaStore copy = ReplicaStore.open(rebuild, rollCycle);
                 ReplicaStore.RawTailer tailer = source.rawTailer()) {
                if (descriptorBytes != null && sharedEnd >= 0) {
                    // Shared excerpts belong to the leader's incarnation; with nothing shared, the leader's
                    // descriptor (possibly another incarnation) is installed by the caller instead.
                    copy.installDescriptor(descriptorBytes);
                }
                tailer.toStart();
                int n;
                while (sharedEnd >= 0 && (n = tailer.next()) >= 0 && tailer.index() <= sharedEnd) {
                    copy.writeAt(tailer.index(), tailer.bytes(), 0, n);
                }
            }
            for (String name : KEPT_FILES) {
                if (!name.equals("queue-enterprise.properties") && Files.exists(dir.resolve(name))) {
                    Files.copy(dir.resolve(name), rebuild.resolve(name), StandardCopyOption.REPLACE_EXISTING);
                }
            }
            // 3. swap: earlier quarantines move along, then the directories change places
            Files.move(dir.resolve(DIR_NAME), rebuild.resolve(DIR_NAME));
            Files.move(dir, old);
            Files.move(rebuild, dir);
            DurableFiles.forceDirectory(parent);
            DurableFiles.deleteTree(old); // its files were copied into quarantine/<time>/original first
        } catch (IOException | RuntimeException e) {
            throw new ReplicationException("queue '" + queueName + "': cannot quarantine the excerpts after 0x"
                    + Long.toHexString(sharedEnd) + " in " + dir + ": " + e, e);
        }
        LOG.warn("queue '" + queueName + "': " + moved + " " + reason.name().toLowerCase(java.util.Locale.ROOT)
                + " excerpts after 0x" + Long.toHexString(sharedEnd) + " moved to " + target);
        return ReplicaStore.open(dir, rollCycle);
    }

    /** The next excerpt; in a damaged copy one Chronicle cannot read ends the saving (the original files keep it). */
    private static int nextReadable(ReplicaStore.RawTailer tailer, QuarantineReason reason) {
        try {
            return tailer.next();
        } catch (RuntimeException e) {
            if (reason != QuarantineReason.DAMAGED) {
                throw e;
            }
            throw new UnreadableExcerptException(String.valueOf(e));
        }
    }

    /** A damaged copy's excerpt that cannot be read: the excerpts saved so far are kept. */
    private static final class UnreadableExcerptException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UnreadableExcerptException(String message) {
            super(message, null, false, false);
        }
    }

    /** What the status reports of this quarantine, beside its README (which says the same in words). */
    private static void writeSummary(Path target, QuarantineReason reason, Instant at, long excerpts, long keptEnd,
                                     String detail) throws IOException {
        java.util.Properties summary = new java.util.Properties();
        summary.setProperty("reason", reason.name());
        summary.setProperty("at", at.toString());
        summary.setProperty("excerpts", Long.toString(excerpts));
        summary.setProperty("keptEnd", Long.toString(keptEnd));
        if (detail != null) {
            summary.setProperty("detail", detail);
        }
        try (var out = Files.newBufferedWriter(target.resolve(SUMMARY_FILE), StandardCharsets.UTF_8)) {
            summary.store(out, "written by the node when it moved these excerpts aside");
        }
    }

    /**
     * The quarantines of the queue in {@code queueDirectory}, as its {@code quarantine/} folder holds them: how many,
     * and the newest one's facts (from its summary; a folder made by a node older than the summary gives its reason by
     * the excerpts file it holds and its time by its name). Reads one small file: called when a queue opens or after a
     * quarantine, never per status.
     */
    static QueueStatus.Quarantines onDisk(Path queueDirectory) {
        Path root = queueDirectory.resolve(DIR_NAME);
        if (!Files.isDirectory(root)) {
            return QueueStatus.Quarantines.NONE;
        }
        List<Path> folders;
        try (Stream<Path> entries = Files.list(root)) {
            folders = entries.filter(Files::isDirectory).sorted().toList(); // names are UTC stamps: sorted by time
        } catch (IOException e) {
            LOG.warn("cannot list " + root + ": " + e);
            return QueueStatus.Quarantines.NONE;
        }
        if (folders.isEmpty()) {
            return QueueStatus.Quarantines.NONE;
        }
        Path newest = folders.get(folders.size() - 1).toAbsolutePath();
        java.util.Properties summary = new java.util.Properties();
        Path summaryFile = newest.resolve(SUMMARY_FILE);
        if (Files.isRegularFile(summaryFile)) {
            try (var in = Files.newBufferedReader(summaryFile, StandardCharsets.UTF_8)) {
                summary.load(in);
            } catch (IOException | IllegalArgumentException e) {
                LOG.warn("cannot read " + summaryFile + ": " + e);
            }
        }
        QuarantineReason reason;
        try {
            reason = QuarantineReason.valueOf(summary.getProperty("reason", ""));
        } catch (IllegalArgumentException e) {
            reason = Files.exists(newest.resolve("damaged-excerpts.bin")) ? QuarantineReason.DAMAGED : QuarantineReason.DIVERGENT;
        }
        String at = summary.getProperty("at");
        if (at == null) {
            try {
                at = Instant.from(STAMP.parse(newest.getFileName().toString())).toString();
            } catch (java.time.DateTimeException e) {
                at = null; // not a folder the node made: reported without a time
            }
        }
        long excerpts;
        try {
            excerpts = Long.parseLong(summary.getProperty("excerpts", "-1"));
        } catch (NumberFormatException e) {
            excerpts = -1;
        }
        return new QueueStatus.Quarantines(folders.size(), reason, at, newest.toString(), excerpts, summary.getProperty("detail"));
    }

    /** At start: a rebuild interrupted by a crash is undone (the original put back) or finished. */
    static void recoverInterruptedRebuild(Path dir) {
        Path parent = dir.toAbsolutePath().getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            return;
        }
        String prefix = "." + dir.getFileName();
        try (Stream<Path> siblings = Files.list(parent)) {
            for (Path p : siblings.toList()) {
                String name = p.getFileName().toString();
                if (name.startsWith(prefix + ".old-")) {
                    if (!Files.exists(dir)) {
                        Files.move(p, dir); // crashed between the two renames: the original is intact
                    } else {
                        DurableFiles.deleteTree(p); // crashed after the swap: the original is in quarantine/<time>/original
                    }
                } else if (name.startsWith(prefix + ".rebuild-")) {
                    if (Files.exists(p.resolve(DIR_NAME)) && !Files.exists(dir.resolve(DIR_NAME))) {
                        Files.move(p.resolve(DIR_NAME), dir.resolve(DIR_NAME));
                    }
                    DurableFiles.deleteTree(p); // an unfinished copy; the next HELLO redoes the truncation
                }
            }
        } catch (IOException e) {
            throw new ReplicationException("cannot recover an interrupted quarantine beside " + dir + ": " + e, e);
        }
    }

    private static void copyOriginals(Path dir, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                if (Files.isRegularFile(f) && !f.getFileName().toString().endsWith(".lock")) {
                    Files.copy(f, to.resolve(f.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }
}
