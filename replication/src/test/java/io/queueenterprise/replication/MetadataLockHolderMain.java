package io.queueenterprise.replication;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A child JVM that holds an exclusive lock on a queue's {@code metadata.cq4t}, as a writer stalled inside Chronicle's
 * exclusive section would: Chronicle's open of that queue then waits 10 s and fails. Prints {@code LOCKED}; exits by
 * itself after 120 s if the test has not killed it.
 */
public final class MetadataLockHolderMain {
    private MetadataLockHolderMain() {
    }

    @SuppressWarnings("try") // the lock is held while the process sleeps
    public static void main(String[] args) throws Exception {
        try (FileChannel channel = FileChannel.open(Path.of(args[0], "metadata.cq4t"), StandardOpenOption.READ, StandardOpenOption.WRITE);
             FileLock ignored = channel.lock()) {
            System.out.println("LOCKED");
            System.out.flush();
            Thread.sleep(120_000);
        }
    }
}
