package io.queueenterprise.crypto;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Loads a {@link KeyRing} from a directory laid out like a mounted Kubernetes Secret:
 * <ul>
 *   <li>{@code <id>.key}: one file per key, {@code id} decimal 0..65535; content: the key as 32 or 64 hex digits
 *       (16 or 32 bytes), optionally followed by one line end. That is the only format: raw bytes, base64 and
 *       whitespace around are refused ({@link KeyFileException.Reason#WRONG_LENGTH},
 *       {@link KeyFileException.Reason#NOT_HEX});</li>
 *   <li>{@code active}: the active key id as decimal text;</li>
 *   <li>names starting with "." ({@code ..data}, {@code ..2024_01_01...}) are ignored, symlinks are followed;
 *       other files are ignored.</li>
 * </ul>
 * {@link #reloadIfChanged()} re-reads the directory when any entry's attributes changed (name, size, mtime,
 * file key, symlink target): call it from a background thread, never the hot path. {@link #current()} is a
 * volatile read, suitable as the {@code Supplier<KeyRing>} of sealers and openers.
 *
 * <p>A Kubernetes Secret volume publishes every version in a timestamped folder and swaps the {@code ..data}
 * link to it atomically; the top-level names are links through {@code ..data}. Where {@code ..data} exists it
 * is resolved ONCE per load and every file is read from that one version, so a rotation that lands during a
 * load can never mix an old {@code active} with new keys. ({@code subPath} mounts never see rotations at all.)
 *
 * <p>Permissions ({@link KeyMaterialPermissions}): a key file, {@code active} file or folder that others can write is
 * refused under every policy; a key file any group or others bit is set on, an {@code active} file or folder its group
 * can write, is reported (warning) or refused ({@link PermissionPolicy#REFUSE}). Links are followed: the real files
 * and the folders they lie in are judged, not the links. Mount Secrets with {@code defaultMode: 0400}.
 * One exception, the only way Kubernetes lets a non-root process read a Secret: in a Secret volume (the
 * {@code ..data} layout) with the pod's {@code fsGroup}, the kubelet makes the files {@code root:<fsGroup>} and adds
 * group read, so {@code defaultMode: 0400} arrives as {@code 0440}. Group read is accepted there, and only there,
 * when the file's group is one of this process's own groups (its fsGroup), the group cannot write and others have
 * no access: the group then admits exactly the pod's containers, which mount the Secret anyway. The same mode on a
 * plain file, or with a group this process is not in, is still loose.
 */
public final class KeyRingSource implements Supplier<KeyRing> {
    static final String ACTIVE_FILE = "active";
    static final String KEY_SUFFIX = ".key";
    private static final int MAX_FILE_BYTES = 4096;

    static final String SECRET_DATA_LINK = "..data";

    /**
     * What to do with loose permissions short of writable by others (which is always refused): key files any group or
     * others bit is set on, {@code active} files and folders their group can write.
     */
    public enum PermissionPolicy {
        /** Load, and log a warning naming the file and its permissions (the default). */
        WARN,
        /** Refuse the ring with {@link KeyFileException.Reason#INSECURE_PERMISSIONS}. */
        REFUSE
    }

    private final Path directory;
    private final PermissionPolicy permissionPolicy;
    private volatile KeyRing current;
    private List<String> snapshot;

    public KeyRingSource(Path directory) {
        this(directory, PermissionPolicy.WARN);
    }

    public KeyRingSource(Path directory, PermissionPolicy permissionPolicy) {
        this.directory = Objects.requireNonNull(directory, "directory");
        this.permissionPolicy = Objects.requireNonNull(permissionPolicy, "permissionPolicy");
    }

    public Path directory() {
        return directory;
    }

    /** Loads the ring (always reading the files) and makes it current. */
    public synchronized KeyRing load() {
        List<String> before = snapshot();
        KeyRing ring = read(directory, permissionPolicy);
        current = ring;
        snapshot = before;
        return ring;
    }

    /**
     * Reloads if the directory changed since the last load. On success the new ring becomes current.
     *
     * @return true if a new ring was loaded
     * @throws KeyFileException if it changed and the new content is invalid; the current ring stays in force
     */
    public synchronized boolean reloadIfChanged() {
        List<String> now = snapshot();
        if (now.equals(snapshot) && current != null) {
            return false;
        }
        KeyRing ring = read(directory, permissionPolicy);
        current = ring;
        snapshot = now;
        return true;
    }

    /** The last ring loaded (volatile read); null before the first {@link #load()}. */
    public KeyRing current() {
        return current;
    }

    @Override
    public KeyRing get() {
        KeyRing r = current;
        if (r == null) {
            throw new IllegalStateException("KeyRingSource(" + directory + "): load() has not been called");
        }
        return r;
    }

    /** Cheap fingerprint of the directory: entry names, sizes, mtimes, file keys and link targets. */
    private List<String> snapshot() {
        List<String> out = new ArrayList<>();
        if (!Files.isDirectory(directory)) {
            out.add("<missing>");
            return out;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(directory)) {
            for (Path p : ds) {
                String name = p.getFileName().toString();
                if (name.startsWith(".") && !name.equals(SECRET_DATA_LINK)) {
                    continue;
                }
                StringBuilder sb = new StringBuilder(name);
                try {
                    BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
                    sb.append('|').append(a.size()).append('|').append(a.lastModifiedTime().toMillis())
                            .append('|').append(a.lastModifiedTime().toString()).append('|').append(a.fileKey());
                    if (Files.isSymbolicLink(p)) {
                        sb.append('|').append(p.toRealPath());
                    }
                } catch (IOException e) {
                    sb.append("|unreadable");
                }
                out.add(sb.toString());
            }
        } catch (IOException e) {
            out.add("<unlistable>");
        }
        out.sort(null);
        return out;
    }

    /** Reads a key directory once, warning about loose permissions. */
    public static KeyRing read(Path directory) {
        return read(directory, PermissionPolicy.WARN);
    }

    /** Reads a key directory once: through one resolution of {@code ..data} when it is a Secret volume. */
    public static KeyRing read(Path given, PermissionPolicy policy) {
        if (!Files.isDirectory(given)) {
            throw new KeyFileException(given, KeyFileException.Reason.DIRECTORY_MISSING,
                    "key directory does not exist or is not a directory");
        }
        Path directory = given;
        Path dataLink = given.resolve(SECRET_DATA_LINK);
        if (Files.isSymbolicLink(dataLink)) {
            try {
                directory = dataLink.toRealPath(); // one version of the Secret for the whole load
            } catch (IOException e) {
                throw new KeyFileException(dataLink, KeyFileException.Reason.UNREADABLE,
                        "cannot resolve the Secret's ..data link: " + e.getClass().getSimpleName());
            }
        }
        boolean secretVolume = !directory.equals(given);
        // The mounted folder; in a Secret volume kubelet's tmpfs root may be sticky 1777 (nothing is read from it but
        // through ..data, which others cannot replace there). The version folder ..data points to, where the keys are.
        KeyMaterialPermissions.checkFolder(given, policy, secretVolume);
        if (secretVolume) {
            KeyMaterialPermissions.checkFolder(directory, policy, false);
        }
        Map<Integer, MasterKey> keys = new TreeMap<>();
        Path activeFile = null;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(directory)) {
            for (Path p : ds) {
                String name = p.getFileName().toString();
                if (name.startsWith(".")) {
                    continue;
                }
                if (name.equals(ACTIVE_FILE)) {
                    activeFile = p;
                    KeyMaterialPermissions.checkActiveFile(p, policy);
                    checkRealFolder(p, directory, policy);
                } else if (name.endsWith(KEY_SUFFIX)) {
                    int id = parseId(p, name.substring(0, name.length() - KEY_SUFFIX.length()));
                    KeyMaterialPermissions.checkSecretFile(p, "key file", policy, secretVolume);
                    checkRealFolder(p, directory, policy);
                    byte[] material = readKey(p);
                    MasterKey k;
                    try {
                        k = MasterKey.of(id, material);
                    } finally {
                        Arrays.fill(material, (byte) 0);
                    }
                    if (keys.putIfAbsent(id, k) != null) {
                        k.destroy();
                        throw new KeyFileException(p, KeyFileException.Reason.DUPLICATE_KEY_ID,
                                "another key file also names key id " + id);
                    }
                }
            }
        } catch (IOException e) {
            throw new KeyFileException(directory, KeyFileException.Reason.UNREADABLE,
                    "cannot list key directory: " + e.getClass().getSimpleName());
        } catch (KeyFileException e) {
            keys.values().forEach(MasterKey::destroy);
            throw e;
        }
        if (keys.isEmpty()) {
            throw new KeyFileException(directory, KeyFileException.Reason.NO_KEYS,
                    "no <id>.key files (expected e.g. 1.key)");
        }
        try {
            if (activeFile == null) {
                throw new KeyFileException(directory.resolve(ACTIVE_FILE), KeyFileException.Reason.ACTIVE_MISSING,
                        "file 'active' naming the active key id is missing");
            }
            int active = readActive(activeFile);
            if (!keys.containsKey(active)) {
                throw new KeyFileException(activeFile, KeyFileException.Reason.ACTIVE_KEY_ABSENT,
                        "active key id " + active + " has no key file " + active + KEY_SUFFIX + "; present ids "
                                + keys.keySet());
            }
            return KeyRing.of(active, keys.values());
        } catch (KeyFileException e) {
            keys.values().forEach(MasterKey::destroy);
            throw e;
        }
    }

    /** A name linked to a file elsewhere: the folder it really lies in must be as safe as the key folder. */
    private static void checkRealFolder(Path file, Path listed, PermissionPolicy policy) {
        if (!Files.isSymbolicLink(file)) {
            return;
        }
        Path real = KeyMaterialPermissions.realParent(file);
        if (real != null && !real.equals(listed)) {
            KeyMaterialPermissions.checkFolder(real, policy, false);
        }
    }

    private static int parseId(Path p, String stem) {
        if (stem.isEmpty() || stem.length() > 9 || !stem.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new KeyFileException(p, KeyFileException.Reason.BAD_FILE_NAME,
                    "key file name must be <decimal id>.key");
        }
        int id = Integer.parseInt(stem);
        if (id > Envelope.MAX_KEY_ID) {
            throw new KeyFileException(p, KeyFileException.Reason.ID_OUT_OF_RANGE,
                    "key id " + id + " outside 0.." + Envelope.MAX_KEY_ID);
        }
        return id;
    }

    private static byte[] readBounded(Path p, String what) {
        try {
            if (!Files.isRegularFile(p)) {
                throw new KeyFileException(p, KeyFileException.Reason.UNREADABLE,
                        what + " is not a regular file (or a dangling link)");
            }
            long size = Files.size(p);
            if (size > MAX_FILE_BYTES) {
                throw new KeyFileException(p, KeyFileException.Reason.WRONG_LENGTH, what + " has " + size
                        + " bytes, more than " + MAX_FILE_BYTES + " (a key file: " + FORMAT + ")");
            }
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new KeyFileException(p, KeyFileException.Reason.UNREADABLE,
                    "cannot read " + what + ": " + e.getClass().getSimpleName());
        }
    }

    /** The one key file format; messages quote it, never the file's content. */
    static final String FORMAT = "the format is the key as 32 or 64 hex digits (16 or 32 bytes), either case,"
            + " optionally followed by one line end (\\n or \\r\\n); nothing else is accepted";

    /**
     * Parses a key file in the one format; anything else is refused (raw bytes, base64, surrounding whitespace: a
     * 32-character passphrase must never pass for a raw 32-byte key). The returned array is a fresh copy the caller
     * must zero.
     */
    static byte[] readKey(Path p) {
        byte[] raw = readBounded(p, "key file");
        try {
            int n = raw.length;
            if (n > 0 && raw[n - 1] == '\n') {
                n--;
                if (n > 0 && raw[n - 1] == '\r') {
                    n--;
                }
            }
            if (onlyWhitespace(raw)) {
                throw new KeyFileException(p, KeyFileException.Reason.KEY_FILE_EMPTY,
                        raw.length == 0 ? "key file is empty" : "key file holds only whitespace");
            }
            if (n != 32 && n != 64) {
                throw new KeyFileException(p, KeyFileException.Reason.WRONG_LENGTH, "key file holds " + n
                        + " characters before its line end (" + raw.length + " bytes in all); " + FORMAT);
            }
            if (!isHex(raw, n)) {
                throw new KeyFileException(p, KeyFileException.Reason.NOT_HEX, "key file holds " + n
                        + " characters that are not all hex digits (raw key bytes, base64 and passphrases are refused); "
                        + FORMAT);
            }
            return decodeHex(raw, n);
        } finally {
            Arrays.fill(raw, (byte) 0);
        }
    }

    private static boolean onlyWhitespace(byte[] raw) {
        for (byte b : raw) {
            if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
                return false;
            }
        }
        return true;
    }

    private static int readActive(Path p) {
        byte[] raw = readBounded(p, "active file");
        String s = new String(raw, java.nio.charset.StandardCharsets.US_ASCII).strip();
        if (s.isEmpty() || s.length() > 9 || !s.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new KeyFileException(p, KeyFileException.Reason.ACTIVE_NOT_A_NUMBER,
                    "'active' must hold a decimal key id (" + raw.length + " bytes found)");
        }
        int id = Integer.parseInt(s);
        if (id > Envelope.MAX_KEY_ID) {
            throw new KeyFileException(p, KeyFileException.Reason.ID_OUT_OF_RANGE,
                    "active key id " + id + " outside 0.." + Envelope.MAX_KEY_ID);
        }
        return id;
    }

    private static boolean isHex(byte[] t, int n) {
        for (int i = 0; i < n; i++) {
            byte b = t[i];
            if (!(b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F')) {
                return false;
            }
        }
        return true;
    }

    private static byte[] decodeHex(byte[] t, int n) {
        byte[] out = new byte[n / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) ((Character.digit(t[2 * i], 16) << 4) | Character.digit(t[2 * i + 1], 16));
        }
        return out;
    }

    @Override
    public String toString() {
        return "KeyRingSource[" + directory + ", " + current + "]";
    }
}
