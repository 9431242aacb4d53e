package io.queueenterprise.queue;

import io.queueenterprise.crypto.CipherMode;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.Collections;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.TreeMap;

/**
 * What a queue is, beside its Chronicle cycle files: its logical name, whether and how it is
 * encrypted, its random incarnation id (the salt of its per-queue key derivation, so a queue
 * recreated under the same name never reuses a key) and the fingerprint of every key id that wrote
 * to it (so a wrong key is refused at open time, even in the mode that cannot detect it per excerpt).
 *
 * <p>Stored as {@value #FILE_NAME} in the queue directory; not secret. Replicas carry a copy, so
 * they derive the same keys and read the same sealed excerpts at the same indexes. Written
 * atomically (temporary file and rename) under a file lock, so several processes may open the same
 * queue at once.
 */
public final class QueueDescriptor {
    public static final String FILE_NAME = "queue-enterprise.properties";
    private static final String LOCK_FILE_NAME = "queue-enterprise.lock";
    public static final int FORMAT_VERSION = 1;
    public static final int INCARNATION_ID_LENGTH = 16;
    private static final HexFormat HEX = HexFormat.of();

    private final String name;
    private final CipherMode cipherMode; // null: plain
    private final byte[] incarnationId;
    private final Map<Integer, Long> keyFingerprints;

    private QueueDescriptor(String name, CipherMode cipherMode, byte[] incarnationId, Map<Integer, Long> keyFingerprints) {
        this.name = Objects.requireNonNull(name, "name");
        if (incarnationId.length != INCARNATION_ID_LENGTH) {
            throw new IllegalArgumentException("incarnation id must be " + INCARNATION_ID_LENGTH + " bytes");
        }
        this.cipherMode = cipherMode;
        this.incarnationId = incarnationId.clone();
        this.keyFingerprints = Collections.unmodifiableMap(new TreeMap<>(keyFingerprints));
    }

    /** A new queue's descriptor with a fresh random incarnation id. */
    public static QueueDescriptor create(String name, CipherMode cipherModeOrNullForPlain) {
        byte[] id = new byte[INCARNATION_ID_LENGTH];
        new SecureRandom().nextBytes(id);
        return new QueueDescriptor(name, cipherModeOrNullForPlain, id, Map.of());
    }

    public String name() {
        return name;
    }

    public boolean encrypted() {
        return cipherMode != null;
    }

    /** The cipher mode of an encrypted queue; null for a plain one. */
    public CipherMode cipherMode() {
        return cipherMode;
    }

    public byte[] incarnationId() {
        return incarnationId.clone();
    }

    /** Key id to key fingerprint (a key check value derived with HKDF, not the key). */
    public Map<Integer, Long> keyFingerprints() {
        return keyFingerprints;
    }

    QueueDescriptor withFingerprint(int keyId, long fingerprint) {
        Map<Integer, Long> fingerprints = new TreeMap<>(keyFingerprints);
        fingerprints.put(keyId, fingerprint);
        return new QueueDescriptor(name, cipherMode, incarnationId, fingerprints);
    }

    // ---------------------------------------------------------------- file form

    /** The file form: a Java properties file (Properties escapes the name, whatever characters it has). */
    String toText() {
        Properties p = new Properties();
        p.setProperty("format", Integer.toString(FORMAT_VERSION));
        p.setProperty("name", name);
        p.setProperty("encryption", cipherMode == null ? "NONE" : cipherMode.name());
        p.setProperty("incarnation", HEX.formatHex(incarnationId));
        keyFingerprints.forEach((id, fp) -> p.setProperty("key." + id + ".fingerprint", HEX.toHexDigits(fp)));
        StringWriter out = new StringWriter();
        try {
            p.store(out, "Queue Enterprise queue descriptor. Not secret; do not edit. Replicas carry a copy.");
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return out.toString();
    }

    static QueueDescriptor parse(String queueLabel, String text) {
        Properties p = new Properties();
        try (Reader r = new StringReader(text)) {
            p.load(r);
        } catch (IOException | IllegalArgumentException e) {
            throw unreadable(queueLabel, "not a properties file: " + e.getMessage(), e);
        }
        String format = p.getProperty("format");
        if (!Integer.toString(FORMAT_VERSION).equals(format)) {
            throw unreadable(queueLabel, "unsupported descriptor format '" + format + "' (this library reads " + FORMAT_VERSION + ")", null);
        }
        String name = required(queueLabel, p, "name");
        String encryption = required(queueLabel, p, "encryption");
        CipherMode mode;
        if ("NONE".equals(encryption)) {
            mode = null;
        } else {
            try {
                mode = CipherMode.valueOf(encryption);
            } catch (IllegalArgumentException e) {
                throw unreadable(queueLabel, "unknown encryption '" + encryption + "'", e);
            }
        }
        byte[] incarnation;
        try {
            incarnation = HEX.parseHex(required(queueLabel, p, "incarnation"));
        } catch (IllegalArgumentException e) {
            throw unreadable(queueLabel, "incarnation is not hex", e);
        }
        if (incarnation.length != INCARNATION_ID_LENGTH) {
            throw unreadable(queueLabel, "incarnation must be " + INCARNATION_ID_LENGTH + " bytes", null);
        }
        Map<Integer, Long> fingerprints = new TreeMap<>();
        for (String key : p.stringPropertyNames()) {
            if (key.startsWith("key.") && key.endsWith(".fingerprint")) {
                try {
                    int id = Integer.parseInt(key.substring(4, key.length() - ".fingerprint".length()));
                    fingerprints.put(id, HEX.fromHexDigitsToLong(p.getProperty(key).trim()));
                } catch (IllegalArgumentException e) {
                    throw unreadable(queueLabel, "bad key fingerprint entry '" + key + "'", e);
                }
            }
        }
        return new QueueDescriptor(name, mode, incarnation, fingerprints);
    }

    private static String required(String queueLabel, Properties p, String key) {
        String v = p.getProperty(key);
        if (v == null || v.isBlank()) {
            throw unreadable(queueLabel, "missing '" + key + "'", null);
        }
        return v.trim();
    }

    private static QueueConfigurationException unreadable(String queueLabel, String why, Throwable cause) {
        return new QueueConfigurationException(queueLabel, QueueConfigurationException.Problem.UNREADABLE_DESCRIPTOR,
                FILE_NAME + ": " + why, cause);
    }

    /** Reads the descriptor in {@code dir}, or returns null when the directory has none. */
    public static QueueDescriptor read(Path dir) {
        Path file = dir.resolve(FILE_NAME);
        if (!Files.exists(file)) {
            return null;
        }
        try {
            return parse(dir.toString(), Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw unreadable(dir.toString(), e.toString(), e);
        }
    }

    /**
     * Writes this descriptor into {@code dir} unless one is there already; returns the one that is
     * there afterwards (ours, or the one another process wrote first).
     */
    public QueueDescriptor createIn(Path dir) {
        return underLock(dir, () -> {
            QueueDescriptor existing = read(dir);
            if (existing != null) {
                return existing;
            }
            writeAtomically(dir, this);
            return this;
        });
    }

    /** Records a key id's fingerprint in the descriptor in {@code dir} (read-modify-write under a lock). */
    static QueueDescriptor recordFingerprint(Path dir, int keyId, long fingerprint) {
        return underLock(dir, () -> {
            QueueDescriptor current = read(dir);
            if (current == null) {
                throw unreadable(dir.toString(), "descriptor vanished", null);
            }
            Long known = current.keyFingerprints.get(keyId);
            if (known != null) {
                return current;
            }
            QueueDescriptor updated = current.withFingerprint(keyId, fingerprint);
            writeAtomically(dir, updated);
            return updated;
        });
    }

    private interface Locked<T> {
        T run() throws IOException;
    }

    private static <T> T underLock(Path dir, Locked<T> action) {
        try {
            Files.createDirectories(dir);
            try (FileChannel channel = FileChannel.open(dir.resolve(LOCK_FILE_NAME),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                 FileLock ignored = channel.lock()) {
                return action.run();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("queue descriptor in " + dir, e);
        }
    }

    private static void writeAtomically(Path dir, QueueDescriptor descriptor) throws IOException {
        Path tmp = Files.createTempFile(dir, FILE_NAME, ".tmp");
        try {
            Files.writeString(tmp, descriptor.toText(), StandardCharsets.UTF_8);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            try {
                Files.move(tmp, dir.resolve(FILE_NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, dir.resolve(FILE_NAME), StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    @Override
    public String toString() {
        return "QueueDescriptor[name=" + name + ", encryption=" + (cipherMode == null ? "NONE" : cipherMode)
                + ", keyIds=" + keyFingerprints.keySet() + "]";
    }
}
