package io.queueenterprise.replication;

import io.queueenterprise.queue.ReplicaStore;
import net.openhft.chronicle.queue.RollCycles;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/** Every excerpt of a queue directory as stored (raw), by index: what "identical replicas" is checked against. */
public final class QueueContents {
    private QueueContents() {
    }

    /** In index order. */
    public static Map<Long, byte[]> read(Path dir) {
        Map<Long, byte[]> contents = new LinkedHashMap<>();
        try (ReplicaStore store = ReplicaStore.open(dir, RollCycles.FAST_DAILY);
             ReplicaStore.RawTailer tailer = store.rawTailer()) {
            tailer.toStart();
            int n;
            while ((n = tailer.next()) >= 0) {
                contents.put(tailer.index(), Arrays.copyOf(tailer.bytes(), n));
            }
        }
        return contents;
    }

    /** A description of the first difference between two replicas' contents, or null when identical. */
    static String difference(Map<Long, byte[]> a, Map<Long, byte[]> b) {
        if (!a.keySet().equals(b.keySet())) {
            return "indexes differ: " + a.size() + " vs " + b.size() + " excerpts";
        }
        for (Map.Entry<Long, byte[]> e : a.entrySet()) {
            if (!Arrays.equals(e.getValue(), b.get(e.getKey()))) {
                return "bytes differ at index 0x" + Long.toHexString(e.getKey());
            }
        }
        return null;
    }
}
