package io.queueenterprise.replication.client;

import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.queue.ReplicaWriteFeed;
import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The writer sessions read what the queue holds, on a real store: a leader's own appends are recorded as made and not
 * read back, yet every excerpt that arrives another way (replicated, while this node follows) is read, however many
 * own appends came before it and whether or not the tailer was moved past them by index.
 */
@Tag("unit")
class WriterSessionsCatchUpTest {
    private static final long OWN = 0x0A11_CE00L;
    private static final long REPLICATED = 0x0B0B_0000L;

    @TempDir
    Path dir;

    @Test
    void aReplicatedExcerptAfterOwnAppendsIsRead() {
        for (int own : new int[]{1, 10, WriterSessions.REPOSITION_AFTER + 5, 2 * WriterSessions.REPOSITION_AFTER + 1}) {
            try (ReplicaStore store = ReplicaStore.open(dir.resolve("q" + own), RollCycles.FAST_DAILY)) {
                WriterSessions w = new WriterSessions();
                store.append(envelope(REPLICATED, 0), 0, 32); // held before the node led: read from the queue
                assertTrue(w.catchUp(store, 1_000));
                assertEquals(0, w.lastSequence(REPLICATED));
                long last = -1;
                for (int s = 0; s < own; s++) { // as the gateway does: catch up, append, record
                    assertTrue(w.catchUp(store, 1_000), "own append " + s);
                    last = store.append(envelope(OWN, s), 0, 32);
                    w.appended(OWN, s, last);
                }
                assertEquals(own - 1, w.lastSequence(OWN));
                assertEquals(last, w.indexOf(OWN, own - 1));

                // the node follows now: the new leader's writer appended more of its own session, and a new one
                long next = last + 1;
                store.writeAt(next, envelope(REPLICATED, 1), 0, 32);
                store.writeAt(next + 1, envelope(REPLICATED + 1, 0), 0, 32);
                assertTrue(w.catchUp(store, 100_000));
                assertEquals(1, w.lastSequence(REPLICATED), own + " own appends before");
                assertEquals(next, w.indexOf(REPLICATED, 1));
                assertEquals(0, w.lastSequence(REPLICATED + 1));
                assertEquals(next + 1, w.indexOf(REPLICATED + 1, 0));
                assertEquals(own - 1, w.lastSequence(OWN));
                w.close();
            }
        }
    }

    @Test
    void aFollowersReplicatedWritesAreTakenFromTheFeedOrReadWhenMoreArrivedThanItHolds() {
        for (int between : new int[]{3, ReplicaWriteFeed.CAPACITY - 1, ReplicaWriteFeed.CAPACITY + 7}) {
            try (ReplicaStore store = ReplicaStore.open(dir.resolve("f" + between), RollCycles.FAST_DAILY)) {
                WriterSessions w = new WriterSessions();
                byte[] local = envelope(REPLICATED + 2, 0);
                local[Envelope.MODE_OFFSET] |= (byte) Envelope.FLAG_INDEX_BOUND; // a local appender's: never a session's
                long index = store.append(local, 0, 32);
                assertTrue(w.catchUp(store, 10)); // read to its end
                int[] next = new int[2];
                long[] at = new long[2];
                for (int round = 0; round < 3; round++) {
                    for (int i = 0; i < between; i++) { // two remote writers' envelopes and local ones, interleaved
                        int writer = i % 3;
                        index++;
                        if (writer == 2) {
                            store.writeAt(index, local, 0, 32);
                        } else {
                            at[writer] = index;
                            store.writeAt(index, envelope(REPLICATED + writer, next[writer]++), 0, 32);
                        }
                    }
                    assertTrue(w.catchUp(store, 100_000), between + " writes");
                    for (int writer = 0; writer < 2; writer++) {
                        assertEquals(next[writer] - 1, w.lastSequence(REPLICATED + writer), between + " writes, round " + round);
                        assertEquals(at[writer], w.indexOf(REPLICATED + writer, next[writer] - 1), between + " writes, round " + round);
                    }
                    assertEquals(-1, w.lastSequence(REPLICATED + 2), "an index-bound envelope is not a session's");
                }
                w.close();
            }
        }
    }

    /**
     * The feed is read while the writer thread writes (as a follower's duty thread reads it while its writer writes):
     * whatever a catch-up records is right at that moment (a sequence's index is the one it was written at), through
     * reads that keep up, reads that fall more than the ring behind (the queue is read instead), and pauses between.
     */
    @Test
    void catchingUpWhileTheWriterWritesNeverRecordsAWrongIndex() throws Exception {
        int writes = 3 * ReplicaWriteFeed.CAPACITY + 500;
        try (ReplicaStore store = ReplicaStore.open(dir.resolve("concurrent"), RollCycles.FAST_DAILY)) {
            byte[] local = envelope(REPLICATED + 2, 0);
            local[Envelope.MODE_OFFSET] |= (byte) Envelope.FLAG_INDEX_BOUND;
            long base = store.append(local, 0, 32) + 1;
            WriterSessions w = new WriterSessions();
            assertTrue(w.catchUp(store, 10));
            java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
            Thread writer = new Thread(() -> {
                try {
                    for (int i = 0; i < writes; i++) {
                        store.writeAt(base + i, envelope(REPLICATED, i), 0, 32);
                    }
                } catch (Throwable e) {
                    failed.set(e);
                }
            }, "feed-writer");
            writer.start();
            java.util.SplittableRandom random = new java.util.SplittableRandom(7);
            int checks = 0;
            while (writer.isAlive() || checks == 0) {
                if (w.catchUp(store, 1 + random.nextInt(2 * ReplicaWriteFeed.CAPACITY))) {
                    long last = w.lastSequence(REPLICATED);
                    if (last >= 0) {
                        assertEquals(base + last, w.indexOf(REPLICATED, last), "sequence " + last);
                        // every one of the epoch's latest PER_EPOCH is known, none skipped (a resend after a failover
                        // would be refused REPLAYED instead of answered with its index)
                        long earlier = Math.max(0, last - random.nextInt(WriterSessions.PER_EPOCH));
                        assertEquals(base + earlier, w.indexOf(REPLICATED, earlier), "sequence " + earlier + ", the last " + last);
                    }
                    checks++;
                }
                if (random.nextInt(4) == 0) {
                    Thread.sleep(random.nextInt(3)); // now and then fall behind, past the ring
                }
            }
            writer.join();
            assertEquals(null, failed.get());
            while (!w.catchUp(store, 100_000)) {
                Thread.onSpinWait();
            }
            assertEquals(writes - 1, w.lastSequence(REPLICATED));
            for (int s = writes - WriterSessions.PER_EPOCH; s < writes; s++) {
                assertEquals(base + s, w.indexOf(REPLICATED, s), "sequence " + s);
            }
            assertTrue(checks > 1, "catch-ups while the writer wrote: " + checks);
            w.close();
        }
    }

    @Test
    void aNewStoreIsReadFromItsStart() {
        try (ReplicaStore first = ReplicaStore.open(dir.resolve("a"), RollCycles.FAST_DAILY);
             ReplicaStore second = ReplicaStore.open(dir.resolve("b"), RollCycles.FAST_DAILY)) {
            WriterSessions w = new WriterSessions();
            assertTrue(w.catchUp(first, 10));
            w.appended(OWN, 0, first.append(envelope(OWN, 0), 0, 32));
            second.append(envelope(REPLICATED, 0), 0, 32);
            second.append(envelope(REPLICATED, 1), 0, 32);
            assertTrue(w.catchUp(second, 10)); // a quarantine's rebuilt copy: what the first held is forgotten
            assertEquals(-1, w.lastSequence(OWN));
            assertEquals(1, w.lastSequence(REPLICATED));
            w.close();
        }
    }

    /** An unbound envelope's header (all the sessions read) and 16 bytes standing for the sealed payload. */
    private static byte[] envelope(long epoch, int sequence) {
        ByteBuffer b = ByteBuffer.allocate(32).order(ByteOrder.LITTLE_ENDIAN);
        b.put(Envelope.VERSION_OFFSET, (byte) Envelope.VERSION);
        b.put(Envelope.MODE_OFFSET, (byte) 2); // a mode code without the index-bound flag
        b.putShort(Envelope.KEY_ID_OFFSET, (short) 1);
        b.putInt(Envelope.SEQUENCE_OFFSET, sequence);
        b.putLong(Envelope.EPOCH_OFFSET, epoch);
        return b.array();
    }
}
