package io.queueenterprise.replication.engine;

import io.queueenterprise.replication.ReplicationException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One queue's leadership terms, as Kafka's leader-epoch checkpoint (KIP-101): for each term, the last index written
 * before it began ({@code -1}: none). Term T's excerpts are those after its entry's index and up to the next
 * entry's. Kept in {@value #FILE_NAME} in the queue directory, fsynced before the node acts on a new entry.
 *
 * <p>Why "last index before" rather than "first index": an excerpt index holds the roll cycle, so the first index
 * of a term is not known when the term starts (it may open a new cycle); the last index before it is.
 */
public final class TermHistory {
    public static final String FILE_NAME = "replication-terms";

    /** A term and the last index written before it. */
    public record Entry(long term, long previousLastIndex) {
    }

    private final Path file;
    private List<Entry> entries;

    private TermHistory(Path file, List<Entry> entries) {
        this.file = file;
        this.entries = entries;
    }

    public static TermHistory load(Path queueDir) {
        Path file = queueDir.resolve(FILE_NAME);
        List<Entry> entries = new ArrayList<>();
        if (Files.exists(file)) {
            try {
                for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                    String l = line.strip();
                    if (l.isEmpty() || l.startsWith("#")) {
                        continue;
                    }
                    String[] parts = l.split("\\s+");
                    if (parts.length != 2) {
                        throw new ReplicationException(file + ": line '" + l + "' is not 'term previousLastIndex'");
                    }
                    entries.add(new Entry(Long.parseLong(parts[0]), Long.parseLong(parts[1])));
                }
            } catch (IOException | NumberFormatException e) {
                throw new ReplicationException(file + " cannot be read: " + e.getMessage(), e);
            }
            check(file, entries);
        }
        return new TermHistory(file, entries);
    }

    private static void check(Path file, List<Entry> entries) {
        for (int i = 1; i < entries.size(); i++) {
            if (entries.get(i).term <= entries.get(i - 1).term || entries.get(i).previousLastIndex < entries.get(i - 1).previousLastIndex) {
                throw new ReplicationException(file + ": entries must have increasing terms and non-decreasing indexes: " + entries);
            }
        }
    }

    public List<Entry> entries() {
        return entries;
    }

    /** The latest term, 0 when none. */
    public long latestTerm() {
        return entries.isEmpty() ? 0 : entries.get(entries.size() - 1).term;
    }

    /** Records that {@code term} starts after {@code lastIndex}; fsynced before it returns. No-op for a known term. */
    public void append(long term, long lastIndex) {
        if (term <= latestTerm()) {
            return;
        }
        List<Entry> next = new ArrayList<>(entries);
        next.add(new Entry(term, lastIndex));
        replace(next);
    }

    /** Replaces the whole history (a follower records its leader's); fsynced before it returns. */
    public void replace(List<Entry> newEntries) {
        List<Entry> copy = List.copyOf(newEntries);
        check(file, copy);
        StringBuilder text = new StringBuilder("# term previousLastIndex (KIP-101 style; written by the replication node)\n");
        for (Entry e : copy) {
            text.append(e.term).append(' ').append(e.previousLastIndex).append('\n');
        }
        try {
            DurableFiles.write(file, text.toString());
        } catch (IOException e) {
            throw new ReplicationException("cannot record the term history in " + file + ": " + e.getMessage(), e);
        }
        entries = copy;
    }

    /**
     * The last index a follower shares with its leader: both hold the same excerpts up to it. From the latest term
     * both histories hold with the same start, the smaller of the two ends of that term (the end being the next
     * term's start, or the replica's last index). -1 when they share nothing.
     */
    public static long sharedEnd(List<Entry> leader, long leaderLast, List<Entry> follower, long followerLast) {
        for (int f = follower.size() - 1; f >= 0; f--) {
            Entry fe = follower.get(f);
            for (int l = leader.size() - 1; l >= 0; l--) {
                Entry le = leader.get(l);
                if (le.term == fe.term && le.previousLastIndex == fe.previousLastIndex) {
                    long leaderEnd = l + 1 < leader.size() ? leader.get(l + 1).previousLastIndex : leaderLast;
                    long followerEnd = f + 1 < follower.size() ? follower.get(f + 1).previousLastIndex : followerLast;
                    return Math.min(leaderEnd, followerEnd);
                }
            }
        }
        return -1;
    }

    @Override
    public String toString() {
        return "TermHistory" + entries;
    }
}
