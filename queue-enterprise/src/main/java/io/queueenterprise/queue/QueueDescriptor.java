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
    public static final int FORMAT_VERSION = 2;
    public static final int MAC_LENGTH = 32;
    public static final int INCARNATION_ID_LENGTH = 16;
    private static final HexFormat HEX = HexFormat.of();

    private final String name;
    private final CipherMode cipherMode; // null: plain
    private final byte[] incarnationId;
    private final Map<Integer, Long> keyFingerprints;
    /** Key id whose derived descriptor key made {@link #mac}; -1 for a plain queue (nothing to authenticate with). */
    private final int macKeyId;
    private final byte[] mac;

    private QueueDescriptor(String name, CipherMode cipherMode, byte[] incarnationId, Map<Integer, Long> keyFingerprints) {
        this(name, cipherMode, incarnationId, keyFingerprints, -1, new byte[0]);
    }

    private QueueDescriptor(String name, CipherMode cipherMode, byte[] incarnationId, Map<Integer, Long> keyFingerprints,
                            int macKeyId, byte[] mac) {
        this.name = Objects.requireNonNull(name, "name");
        if (incarnationId.length != INCARNATION_ID_LENGTH) {
            throw new IllegalArgumentException("incarnation id must be " + INCARNATION_ID_LENGTH + " bytes");
        }
        this.cipherMode = cipherMode;
        this.incarnationId = incarnationId.clone();
        this.keyFingerprints = Collections.unmodifiableMap(new TreeMap<>(keyFingerprints));
        this.macKeyId = macKeyId;
        this.mac = mac.clone();
    }

    /** A new queue's descriptor with a fresh random incarnation id. */
    public static QueueDescriptor create(String name, CipherMode cipherModeOrNullForPlain) {
        byte[] id = new byte[INCARNATION_ID_LENGTH];
        new SecureRandom().nextBytes(id);
        return new QueueDescriptor(name, cipherModeOrNullForPlain, id, Map.of());
    }

    /** A descriptor rebuilt for an existing incarnation (recovery of a lost descriptor); not yet authenticated. */
    static QueueDescriptor recovered(String name, CipherMode cipherMode, byte[] incarnationId) {
        return new QueueDescriptor(name, cipherMode, incarnationId, Map.of());
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

    /** A copy with one more fingerprint and NO authenticator: the caller authenticates it again. */
    QueueDescriptor withFingerprint(int keyId, long fingerprint) {
        Map<Integer, Long> fingerprints = new TreeMap<>(keyFingerprints);
        fingerprints.put(keyId, fingerprint);
        return new QueueDescriptor(name, cipherMode, incarnationId, fingerprints);
    }

    /** A copy carrying the authenticator {@code mac}, made under key {@code keyId} over {@link #authenticatedContent}. */
    QueueDescriptor withMac(int keyId, byte[] mac) {
        return new QueueDescriptor(name, cipherMode, incarnationId, keyFingerprints, keyId, mac);
    }

    /** The key id the authenticator was made under, or -1 when there is none. */
    int macKeyId() {
        return macKeyId;
    }

    byte[] mac() {
        return mac.clone();
    }

    /**
     * Every field that says how the queue's bytes are interpreted, in one unambiguous encoding (each field
     * length-prefixed), including the key id that authenticates it: what the descriptor authenticator covers.
     */
    byte[] authenticatedContent(int keyId) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
            out.writeUTF("queue-enterprise descriptor");
            out.writeInt(FORMAT_VERSION);
            byte[] n = name.getBytes(StandardCharsets.UTF_8);
            out.writeInt(n.length);
            out.write(n);
            out.writeUTF(cipherMode == null ? "NONE" : cipherMode.name());
            out.write(incarnationId);
            out.writeInt(keyFingerprints.size());
            for (Map.Entry<Integer, Long> e : keyFingerprints.entrySet()) {
                out.writeInt(e.getKey());
                out.writeLong(e.getValue());
            }
            out.writeInt(keyId);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in memory: does not happen
        }
        return bytes.toByteArray();
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
        if (macKeyId >= 0) {
            p.setProperty("mac.key", Integer.toString(macKeyId));
            p.setProperty("mac", HEX.formatHex(mac));
        }
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
            throw unreadable(queueLabel, "unsupported descriptor format '" + format + "' (this library reads " + FORMAT_VERSION
                    + "; format 1 queues were never deployed and are not read: see docs/crypto.md)", null);
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
                    fingerprints.put(id, HexFormat.fromHexDigitsToLong(p.getProperty(key).trim()));
                } catch (IllegalArgumentException e) {
                    throw unreadable(queueLabel, "bad key fingerprint entry '" + key + "'", e);
                }
            }
        }
        int macKeyId = -1;
        byte[] mac = new byte[0];
        if (p.getProperty("mac") != null || p.getProperty("mac.key") != null) {
            try {
                macKeyId = Integer.parseInt(required(queueLabel, p, "mac.key"));
                mac = HEX.parseHex(required(queueLabel, p, "mac"));
            } catch (IllegalArgumentException e) {
                throw unreadable(queueLabel, "bad 'mac' or 'mac.key' entry", e);
            }
            if (macKeyId < 0 || macKeyId > 0xFFFF || mac.length != MAC_LENGTH) {
                throw unreadable(queueLabel, "bad 'mac' or 'mac.key' entry", null);
            }
        }
        return new QueueDescriptor(name, mode, incarnation, fingerprints, macKeyId, mac);
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

    /**
     * A descriptor received from a node by a remote writer, checked against the writer's keys: authentic under a key
     * of {@code ring}, of {@code mode}, and with the ring's active key recorded.
     *
     * @throws QueueConfigurationException UNREADABLE_DESCRIPTOR, PLAIN_QUEUE_OPENED_AS_ENCRYPTED, CIPHER_MODE_MISMATCH,
     *                                     DESCRIPTOR_NOT_AUTHENTIC or WRONG_KEY
     */
    public static QueueDescriptor verifiedForRemoteWriter(String label, byte[] bytes, io.queueenterprise.crypto.KeyRing ring,
                                                          CipherMode mode) {
        return QueueKeys.verifyForRemoteWriter(label, bytes, ring, mode);
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

    /**
     * Read-modify-write of the descriptor in {@code dir} under the descriptor lock: {@code update} gets the
     * current descriptor and returns the one to store (the same object to store nothing).
     */
    static QueueDescriptor update(Path dir, java.util.function.UnaryOperator<QueueDescriptor> update) {
        return underLock(dir, () -> {
            QueueDescriptor current = read(dir);
            if (current == null) {
                throw unreadable(dir.toString(), "descriptor vanished", null);
            }
            QueueDescriptor updated = update.apply(current);
            if (updated != current) {
                writeAtomically(dir, updated);
            }
            return updated;
        });
    }

    /**
     * Replaces the descriptor in {@code dir} with {@code bytes} exactly as given (a replica installing its leader's
     * descriptor: the same bytes authenticate the same way), atomically and under the descriptor lock.
     */
    static void replaceWith(Path dir, byte[] bytes) {
        underLock(dir, () -> {
            Path tmp = Files.createTempFile(dir, FILE_NAME, ".tmp");
            try {
                Files.write(tmp, bytes);
                try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                    ch.force(true);
                }
                Files.move(tmp, dir.resolve(FILE_NAME), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(tmp);
            }
            return null;
        });
    }

    private interface Locked<T> {
        T run() throws IOException;
    }

    @SuppressWarnings("try") // the lock is held for the body; it needs no name there
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
