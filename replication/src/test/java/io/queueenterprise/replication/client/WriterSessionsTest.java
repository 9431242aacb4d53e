package io.queueenterprise.replication.client;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What a node answers a resend with: the original index of each of an epoch's latest {@link WriterSessions#PER_EPOCH}
 * appends while the epoch is among the {@link WriterSessions#RINGS} most recently active, the last one always, and
 * never a wrong index (-1, "no longer known", otherwise).
 */
@Tag("unit")
class WriterSessionsTest {

    @Test
    void anEpochsLatestWindowIsKnownAndNothingOlder() {
        WriterSessions w = new WriterSessions();
        int n = 3 * WriterSessions.PER_EPOCH + 17;
        for (int s = 0; s < n; s++) {
            w.record(7L, s, 1_000L + 3L * s);
        }
        assertEquals(n - 1, w.lastSequence(7L));
        for (int s = 0; s < n; s++) {
            long expected = s > n - 1 - WriterSessions.PER_EPOCH ? 1_000L + 3L * s : -1;
            assertEquals(expected, w.indexOf(7L, s), "sequence " + s);
        }
        assertEquals(-1, w.indexOf(8L, 0), "an epoch the queue holds nothing of");
    }

    @Test
    void interleavedWritersMatchAReferenceAndNeverAnswerWrongly() {
        SplittableRandom random = new SplittableRandom(18);
        WriterSessions w = new WriterSessions();
        int writers = 5;
        long[] epochs = new long[writers];
        int[] next = new int[writers];
        Map<Long, Map<Long, Long>> reference = new HashMap<>();
        for (int i = 0; i < writers; i++) {
            epochs[i] = random.nextLong();
            reference.put(epochs[i], new HashMap<>());
        }
        long index = 1L << 32;
        for (int op = 0; op < 60_000; op++) {
            int i = random.nextInt(writers);
            long at = index += 1 + random.nextInt(3); // local appends in between
            w.record(epochs[i], next[i], at);
            reference.get(epochs[i]).put((long) next[i], at);
            next[i]++;
        }
        for (int i = 0; i < writers; i++) {
            for (long s = 0; s < next[i]; s++) {
                long answer = w.indexOf(epochs[i], s);
                boolean recent = s > next[i] - 1 - WriterSessions.PER_EPOCH;
                assertEquals(recent ? reference.get(epochs[i]).get(s) : -1L, answer, "writer " + i + " sequence " + s);
            }
        }
    }

    @Test
    void theLeastRecentlyActiveEpochGivesUpItsRingAndKeepsItsLast() {
        WriterSessions w = new WriterSessions();
        for (long e = 1; e <= WriterSessions.RINGS; e++) {
            for (int s = 0; s < 10; s++) {
                w.record(e, s, e * 100 + s);
            }
        }
        w.record(1L, 10, 110L); // epoch 1 active again: epoch 2 is now the least recently active
        w.record(1_000L, 0, 99_999L); // a new writer takes epoch 2's ring
        assertEquals(-1, w.indexOf(2L, 5), "epoch 2's ring went to the new writer");
        assertEquals(209, w.indexOf(2L, 9), "its last append is still known");
        assertEquals(105, w.indexOf(1L, 5));
        assertEquals(305, w.indexOf(3L, 5));
        assertEquals(99_999L, w.indexOf(1_000L, 0));
    }

    @Test
    void aSequenceRunThatJumpsForgetsWhatCameBefore() {
        WriterSessions w = new WriterSessions();
        for (int s = 0; s < 10; s++) {
            w.record(5L, s, 500L + s);
        }
        // not what a node appends (it takes only the next sequence), but a ring slot must never answer for another run
        w.record(5L, 10 + WriterSessions.PER_EPOCH / 2, 900L);
        for (int s = 0; s < 10; s++) {
            assertEquals(-1, w.indexOf(5L, s), "sequence " + s);
        }
        assertEquals(900L, w.indexOf(5L, 10 + WriterSessions.PER_EPOCH / 2));
        w.record(5L, 3, 1L); // older: ignored
        assertEquals(10 + WriterSessions.PER_EPOCH / 2, w.lastSequence(5L));
    }
}
