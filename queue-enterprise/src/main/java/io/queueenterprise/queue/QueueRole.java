package io.queueenterprise.queue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Whether this copy of a queue may take appends: a replica may not until it is promoted, and every promotion
 * is under a term higher than any this directory has seen. Kept in {@value #FILE_NAME} beside the cycle files
 * ("replica", or "leader &lt;term&gt;"), so a restarted replica stays a replica and a term is never reused by
 * this directory. A queue that never was a replica has no such file and is its own leader.
 */
final class QueueRole {
    static final String FILE_NAME = "queue-enterprise.role";
    private static final String LOCK_FILE_NAME = "queue-enterprise.role.lock";

    private final Path dir;
    private volatile boolean replica;
    private volatile long leaderTerm;

    private QueueRole(Path dir, boolean replica, long leaderTerm) {
        this.dir = dir;
        this.replica = replica;
        this.leaderTerm = leaderTerm;
    }

    static QueueRole open(Path dir, String queueName, boolean createAsReplica, boolean readOnly) {
        Path file = dir.resolve(FILE_NAME);
        if (Files.exists(file)) {
            String text;
            try {
                text = Files.readString(file, StandardCharsets.US_ASCII).strip();
            } catch (IOException e) {
                throw new QueueConfigurationException(queueName, QueueConfigurationException.Problem.UNREADABLE_DESCRIPTOR,
                        "cannot read " + file + ": " + e.getMessage(), e);
            }
            if (text.equals("replica")) {
                return new QueueRole(dir, true, 0);
            }
            if (text.startsWith("leader ")) {
                try {
                    return new QueueRole(dir, false, Long.parseLong(text.substring(7).strip()));
                } catch (NumberFormatException e) {
                    // fall through to the error below
                }
            }
            throw new QueueConfigurationException(queueName, QueueConfigurationException.Problem.UNREADABLE_DESCRIPTOR,
                    file + " must say 'replica' or 'leader <term>', found '" + text + "'");
        }
        if (createAsReplica && !readOnly) {
            write(dir, queueName, "replica");
        }
        return new QueueRole(dir, createAsReplica, 0);
    }

    boolean isReplica() {
        return replica;
    }

    long leaderTerm() {
        return leaderTerm;
    }

    /** Records "leader term" if term is above the recorded one, re-read under a file lock (another process may have promoted). */
    @SuppressWarnings("try") // the lock is held for the body; it needs no name there
    synchronized void promote(String queueName, long term) {
        try (FileChannel channel = FileChannel.open(dir.resolve(LOCK_FILE_NAME), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
             FileLock ignored = channel.lock()) {
            QueueRole onDisk = open(dir, queueName, false, true);
            long recorded = Math.max(leaderTerm, onDisk.leaderTerm);
            if (term <= recorded) {
                throw new QueueConfigurationException(queueName, QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE,
                        "term " + term + " is not above term " + recorded + ", which this queue was already promoted under");
            }
            write(dir, queueName, "leader " + term); // recorded before it takes effect
        } catch (IOException e) {
            throw new UncheckedIOException("queue '" + queueName + "': cannot lock " + dir.resolve(LOCK_FILE_NAME), e);
        }
        leaderTerm = term;
        replica = false;
    }

    /**
     * Records "replica" for a directory a replication node follows into (or fences): library appenders opened
     * after this are refused until the node leads again. Used by {@link ReplicaStore}.
     */
    static void markReplica(Path dir) {
        write(dir, dir.toString(), "replica");
    }

    private static void write(Path dir, String queueName, String text) {
        try {
            Path tmp = Files.createTempFile(dir, FILE_NAME, ".tmp");
            Files.writeString(tmp, text + "\n", StandardCharsets.US_ASCII);
            Files.move(tmp, dir.resolve(FILE_NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("queue '" + queueName + "': cannot record its role in " + dir, e);
        }
    }
}
