package io.queueenterprise.cli;

import net.openhft.chronicle.bytes.Bytes;
import io.queueenterprise.replication.engine.RollCycleNames;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one replica of a queue holds, as stored (sealed excerpts stay sealed: no key needed): a SHA-256 per index
 * and one over all (index, excerpt) pairs in order. Two replicas are identical when their per-index digests are.
 * Reads with a read-only Chronicle tailer, so a running node is not disturbed.
 */
record ReplicaDigest(Map<Long, String> perIndex, String whole) {

    static ReplicaDigest of(Path queueDirectory, String rollCycle) {
        Map<Long, String> perIndex = new LinkedHashMap<>();
        MessageDigest whole = sha256();
        if (!Files.isDirectory(queueDirectory)) {
            return new ReplicaDigest(perIndex, HexFormat.of().formatHex(whole.digest()));
        }
        try (SingleChronicleQueue queue = SingleChronicleQueueBuilder.binary(queueDirectory.toFile())
                .rollCycle(RollCycleNames.of(rollCycle)).readOnly(true).build();
             ExcerptTailer tailer = queue.createTailer()) {
            while (true) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        break;
                    }
                    Bytes<?> bytes = dc.wire().bytes();
                    byte[] excerpt = bytes.toByteArray();
                    long index = dc.index();
                    MessageDigest one = sha256();
                    one.update(excerpt);
                    perIndex.put(index, HexFormat.of().formatHex(one.digest()));
                    whole.update(longBytes(index));
                    whole.update(excerpt);
                }
            }
        }
        return new ReplicaDigest(perIndex, HexFormat.of().formatHex(whole.digest()));
    }

    int excerpts() {
        return perIndex.size();
    }

    /** The first difference from {@code other}, in words; null when both hold the same excerpts at the same indexes. */
    String differenceFrom(ReplicaDigest other) {
        for (Map.Entry<Long, String> e : perIndex.entrySet()) {
            String theirs = other.perIndex.get(e.getKey());
            if (theirs == null) {
                return "index 0x" + Long.toHexString(e.getKey()) + " missing";
            }
            if (!theirs.equals(e.getValue())) {
                return "index 0x" + Long.toHexString(e.getKey()) + " holds another excerpt";
            }
        }
        for (Long index : other.perIndex.keySet()) {
            if (!perIndex.containsKey(index)) {
                return "index 0x" + Long.toHexString(index) + " extra";
            }
        }
        return null;
    }

    private static byte[] longBytes(long v) {
        byte[] b = new byte[8];
        for (int i = 7; i >= 0; i--) {
            b[i] = (byte) v;
            v >>>= 8;
        }
        return b;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
