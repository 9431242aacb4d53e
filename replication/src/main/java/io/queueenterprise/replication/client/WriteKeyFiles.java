package io.queueenterprise.replication.client;

import io.queueenterprise.crypto.CredentialFile;
import io.queueenterprise.crypto.WriteKeys;
import io.queueenterprise.protocol.client.WriteTag;
import org.agrona.collections.Int2ObjectHashMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The node's write-authorisation keys ({@link WriteKeys}), one per queue and key version, read from
 * {@code <directory>/<queue>.<key id>.key} (flat, so that one Kubernetes Secret can hold them all; a key id has no
 * dot, so the name is unambiguous) when an APPEND first names the version (so a key staged for a rotation
 * is picked up without a restart) and kept. A version with no file is looked for again at most once a second per
 * queue, so APPENDs naming unknown versions cannot turn the duty cycle into a file reader. Duty-cycle thread only.
 */
final class WriteKeyFiles {
    private static final Logger LOG = LoggerFactory.getLogger(WriteKeyFiles.class);
    static final long MISS_RETRY_NANOS = 1_000_000_000L;

    private final Path directory;
    private final Map<String, Int2ObjectHashMap<WriteTag>> byQueue = new HashMap<>();
    private final Map<String, Long> lastMissNanos = new HashMap<>();
    /** Why the last lookup found nothing (for the refusal's message). */
    private String problem;

    /** @param directory null: no write keys, every lookup finds nothing */
    WriteKeyFiles(Path directory) {
        this.directory = directory;
    }

    /** The write tag of {@code queue}'s key version {@code keyId}, or null ({@link #problem()} says why). */
    WriteTag find(String queue, int keyId, long nowNanos) {
        Int2ObjectHashMap<WriteTag> keys = byQueue.get(queue);
        WriteTag tag = keys == null ? null : keys.get(keyId);
        if (tag != null) {
            return tag;
        }
        if (directory == null) {
            problem = "this node has no writeKeyDirectory, so it takes no remote APPEND";
            return null;
        }
        Long missed = lastMissNanos.get(queue);
        if (missed != null && nowNanos - missed < MISS_RETRY_NANOS) {
            problem = "this node holds no write key for queue '" + queue + "' key version " + keyId;
            return null;
        }
        Path file = directory.resolve(fileName(queue, keyId));
        try {
            if (!Files.isRegularFile(file)) {
                throw new IllegalStateException("no file " + file);
            }
            byte[] key = CredentialFile.read(file, "write key", WriteKeys.LENGTH);
            if (key.length != WriteKeys.LENGTH) {
                Arrays.fill(key, (byte) 0);
                throw new IllegalArgumentException("write key file " + file + " holds " + key.length + " bytes, not "
                        + WriteKeys.LENGTH);
            }
            tag = new WriteTag(key);
        } catch (Exception e) {
            lastMissNanos.put(queue, nowNanos);
            problem = "this node holds no usable write key for queue '" + queue + "' key version " + keyId + " ("
                    + e.getMessage() + ")";
            LOG.warn(problem);
            return null;
        }
        byQueue.computeIfAbsent(queue, q -> new Int2ObjectHashMap<>()).put(keyId, tag);
        return tag;
    }

    /** The file name of {@code queue}'s write key of version {@code keyId}: {@code <queue>.<keyId>.key}. */
    static String fileName(String queue, int keyId) {
        return queue + "." + keyId + ".key";
    }

    String problem() {
        return problem;
    }

    void close() {
        for (Int2ObjectHashMap<WriteTag> keys : byQueue.values()) {
            keys.values().forEach(WriteTag::destroy);
        }
        byQueue.clear();
    }
}
