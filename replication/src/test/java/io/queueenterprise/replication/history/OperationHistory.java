package io.queueenterprise.replication.history;

import io.queueenterprise.queue.ReplicaStore;
import net.openhft.chronicle.queue.RollCycle;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.zip.CRC32C;

/**
 * Every operation a fault test performs on a replicated queue, with when it was called and when it returned
 * ({@link System#nanoTime}: CLOCK_MONOTONIC, comparable across the JVMs of one machine), written as the JSON lines
 * {@code tools/linearizability} reads. Thread-safe: writers on many threads record at once.
 *
 * <p>An append is recorded by {@link #append} before the call and completed by exactly one of {@link Append#ok},
 * {@link Append#timedOut}, {@link Append#refused} after it; one never completed (its thread died, the test gave up)
 * is written with outcome {@code unknown} and no return: it may have taken effect at any later time, at most once.
 * Values are named by {@link #valueOf} (a checksum of the bytes, with their length), unique within a history.
 */
public final class OperationHistory {
    private final ConcurrentLinkedQueue<Append> appends = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> reads = new ConcurrentLinkedQueue<>();

    /** An append in flight. */
    public final class Append {
        private final int client;
        private final String queue;
        private final String value;
        private final long call = System.nanoTime();
        private volatile long returned = -1;
        private volatile String outcome = "unknown";
        private volatile long index = -1;

        private Append(int client, String queue, String value) {
            this.client = client;
            this.queue = queue;
            this.value = value;
        }

        /** Acknowledged at {@code at}. */
        public void ok(long at) {
            complete("ok", at);
        }

        /** Written at {@code at} but not acknowledged in time: may be kept or lost, at most once. */
        public void timedOut(long at) {
            complete("timeout", at);
        }

        /**
         * A pipelined append written at {@code index}, recorded by the acknowledged watermark: acknowledged once it
         * passes {@code index} (waited for up to {@code timeout} when {@code wait}, else looked at once), timed out at
         * its index otherwise (written, not acknowledged: kept or quarantined). True when acknowledged.
         */
        public boolean settle(io.queueenterprise.queue.QueueAcknowledgements acks, long index, boolean wait,
                              java.time.Duration timeout) {
            try {
                if (wait) {
                    acks.awaitAcknowledged(index, timeout);
                } else if (!acks.isAcknowledged(index)) {
                    timedOut(index);
                    return false;
                }
                ok(index);
                return true;
            } catch (io.queueenterprise.queue.AckTimeoutException notAcknowledged) {
                timedOut(notAcknowledged.index());
                return false;
            }
        }

        /** Failed in a way that does not say whether it was written: at most once, before now. */
        public void unknown() {
            complete("unknown", -1);
        }

        /** Refused before anything was written. */
        public void refused() {
            complete("refused", -1);
        }

        private void complete(String how, long at) {
            index = at;
            outcome = how;
            returned = System.nanoTime();
        }

        private String json() {
            StringBuilder line = new StringBuilder(160).append("{\"client\":").append(client)
                .append(",\"queue\":\"").append(queue).append("\",\"op\":\"append\",\"value\":\"").append(value)
                .append("\",\"call\":").append(call);
            long end = returned;
            if (end >= 0) {
                line.append(",\"return\":").append(end);
            }
            line.append(",\"outcome\":\"").append(end >= 0 ? outcome : "unknown").append('"');
            if (end >= 0 && index >= 0) {
                line.append(",\"index\":").append(index);
            }
            return line.append('}').toString();
        }
    }

    /** Records the call of an append of {@code payload} by {@code client} (a number per writer) to {@code queue}. */
    public Append append(int client, String queue, byte[] payload) {
        Append append = new Append(client, queue, valueOf(payload));
        appends.add(append);
        return append;
    }

    /**
     * Records a read of a whole replica: every (index, bytes) {@code replica} held, read between {@code callNanos} and
     * {@code returnNanos}.
     */
    public void read(String queue, String replica, long callNanos, long returnNanos, SortedMap<Long, byte[]> log) {
        StringBuilder line = new StringBuilder(64 + 32 * log.size()).append("{\"client\":").append(1000 + reads.size())
            .append(",\"queue\":\"").append(queue).append("\",\"op\":\"read\",\"replica\":\"").append(replica)
            .append("\",\"call\":").append(callNanos).append(",\"return\":").append(returnNanos)
            .append(",\"outcome\":\"ok\",\"log\":[");
        boolean first = true;
        for (Map.Entry<Long, byte[]> e : log.entrySet()) {
            line.append(first ? "" : ",").append('[').append(e.getKey()).append(",\"").append(valueOf(e.getValue())).append("\"]");
            first = false;
        }
        reads.add(line.append("]}").toString());
    }

    /**
     * Reads every excerpt {@code replica} stores for {@code queue} in {@code dir} (raw, as stored: for a plain queue the
     * payload itself), records the read, and returns what it found by index.
     */
    public SortedMap<Long, byte[]> readReplica(String queue, String replica, Path dir, RollCycle rollCycle) {
        long call = System.nanoTime();
        SortedMap<Long, byte[]> contents = new TreeMap<>();
        try (ReplicaStore store = ReplicaStore.open(dir, rollCycle);
             ReplicaStore.RawTailer tailer = store.rawTailer()) {
            tailer.toStart();
            int n;
            while ((n = tailer.next()) >= 0) {
                contents.put(tailer.index(), Arrays.copyOf(tailer.bytes(), n));
            }
        }
        read(queue, replica, call, System.nanoTime(), contents);
        return contents;
    }

    /** How many appends were recorded. */
    public int appends() {
        return appends.size();
    }

    /** Writes the history (appends, then reads) to {@code file}. */
    public Path write(Path file) throws IOException {
        List<String> lines = new ArrayList<>();
        appends.forEach(a -> lines.add(a.json()));
        lines.addAll(reads);
        try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (String line : lines) {
                out.write(line);
                out.write('\n');
            }
        }
        return file;
    }

    /** A name for {@code bytes}: their CRC32C and length (the tests make payloads unique). */
    public static String valueOf(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        return HexFormat.of().toHexDigits((int) crc.getValue()) + "-" + bytes.length;
    }
}
