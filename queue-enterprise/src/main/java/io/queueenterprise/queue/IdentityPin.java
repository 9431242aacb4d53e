package io.queueenterprise.queue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;

/**
 * Pins an encrypted queue's identity (its incarnation id) in Chronicle's own metadata store
 * ({@code metadata.cq4t}, beside the cycle files), so that a descriptor copied in from another queue or from
 * an older incarnation of this directory is refused even when it is authentic under the same master key.
 */
final class IdentityPin {
    static final String HIGH = "queue-enterprise.incarnation.high";
    static final String LOW = "queue-enterprise.incarnation.low";

    private IdentityPin() {
    }

    static void check(SingleChronicleQueue chronicle, QueueDescriptor descriptor, boolean readOnly, Path dir) {
        ByteBuffer id = ByteBuffer.wrap(descriptor.incarnationId());
        long high = id.getLong();
        long low = id.getLong();
        long pinnedHigh = chronicle.tableStoreGet(HIGH);
        long pinnedLow = chronicle.tableStoreGet(LOW);
        boolean pinned = pinnedHigh != Long.MIN_VALUE || pinnedLow != Long.MIN_VALUE;
        if (!pinned) {
            if (!readOnly) {
                chronicle.tableStorePut(HIGH, high);
                chronicle.tableStorePut(LOW, low);
            }
            return;
        }
        if (pinnedHigh != high || pinnedLow != low) {
            throw new QueueConfigurationException(descriptor.name(), QueueConfigurationException.Problem.IDENTITY_MISMATCH,
                    dir.resolve(QueueDescriptor.FILE_NAME) + " names incarnation " + hex(high, low)
                            + " but the queue's cycle files belong to incarnation " + hex(pinnedHigh, pinnedLow)
                            + ": a descriptor from another queue or an older incarnation");
        }
    }

    /** The incarnation id pinned in {@code dir}'s metadata, or null when none is (or the directory has no queue). */
    static byte[] pinnedIncarnation(Path dir) {
        Path metadata = dir.resolve(SingleChronicleQueue.QUEUE_METADATA_FILE);
        if (!java.nio.file.Files.isRegularFile(metadata) || !java.nio.file.Files.isReadable(metadata)) {
            return null; // Chronicle would log a WARN with a stack trace and fall back to a store that throws "Read only"
        }
        try (SingleChronicleQueue chronicle = net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder
                .single(dir.toFile()).readOnly(true).build()) {
            long high = chronicle.tableStoreGet(HIGH);
            long low = chronicle.tableStoreGet(LOW);
            if (high == Long.MIN_VALUE && low == Long.MIN_VALUE) {
                return null;
            }
            return ByteBuffer.allocate(16).putLong(high).putLong(low).array();
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static String hex(long high, long low) {
        return String.format("%016x%016x", high, low);
    }
}
