package io.queueenterprise.crypto;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Loads a {@link KeyRing} from a directory laid out like a mounted Kubernetes Secret:
 * <ul>
 *   <li>{@code <id>.key}: one file per key, {@code id} decimal 0..65535; content exactly 16 or 32 raw bytes, or
 *       the same as hex (32/64 characters) or base64 (24/44 characters) text, surrounding whitespace allowed;</li>
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
 * <p>Permissions: a key file readable by group or others, or a key folder writable by others, is reported
 * (warning) or refused ({@link PermissionPolicy#REFUSE}). Mount Secrets with {@code defaultMode: 0400}.
 * One exception, the only way Kubernetes lets a non-root process read a Secret: in a Secret volume (the
 * {@code ..data} layout) with the pod's {@code fsGroup}, the kubelet makes the files {@code root:<fsGroup>} and adds
 * group read, so {@code defaultMode: 0400} arrives as {@code 0440}. Group read is accepted there, and only there,
 * when the file's group is one of this process's own groups (its fsGroup), the group cannot write and others have
 * no access: the group then admits exactly the pod's containers, which mount the Secret anyway. The same mode on a
 * plain file, or with a group this process is not in, is still loose.
 *
 * <p>A raw 16/32-byte file whose every byte happens to be a hex digit (or base64 text of a valid length) is read
 * as text; for random key bytes the probability is negligible (below 2^-100).
 */
public final class KeyRingSource implements Supplier<KeyRing> {
    static final String ACTIVE_FILE = "active";
    static final String KEY_SUFFIX = ".key";
    private static final int MAX_FILE_BYTES = 4096;

    static final String SECRET_DATA_LINK = "..data";
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(KeyRingSource.class);

    /** What to do with key files that others than the owner could read, or folders others could write. */
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
        checkFolder(given, policy);
        boolean secretVolume = !directory.equals(given);
        if (secretVolume) {
            checkFolder(directory, policy);
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
                } else if (name.endsWith(KEY_SUFFIX)) {
                    int id = parseId(p, name.substring(0, name.length() - KEY_SUFFIX.length()));
                    checkKeyFile(p, policy, secretVolume);
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

    /**
     * A key file must be readable by its owner alone (following links: a Secret's files are links), except for the
     * fsGroup projection of a Secret volume (class comment).
     */
    private static void checkKeyFile(Path p, PermissionPolicy policy, boolean secretVolume) {
        java.util.Set<java.nio.file.attribute.PosixFilePermission> perms = posixPermissions(p);
        if (perms == null) {
            return;
        }
        boolean othersAccess = perms.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_READ)
                || perms.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE);
        boolean groupRead = perms.contains(java.nio.file.attribute.PosixFilePermission.GROUP_READ);
        if (groupRead && !othersAccess && secretVolume
                && !perms.contains(java.nio.file.attribute.PosixFilePermission.GROUP_WRITE) && inOwnGroup(p)) {
            return; // 0440 root:<fsGroup>: how the kubelet projects defaultMode 0400 for a non-root pod
        }
        if (groupRead || perms.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_READ)) {
            insecure(p, "key file is readable by group or others ("
                    + java.nio.file.attribute.PosixFilePermissions.toString(perms)
                    + "); make it 0400 (Kubernetes: defaultMode: 0400; with the pod's fsGroup the kubelet's 0440"
                    + " root:<fsGroup> is accepted)", policy);
        }
    }

    /** Whether the file's group is one of this process's groups (Linux: {@code /proc/self/status}); false elsewhere. */
    private static boolean inOwnGroup(Path p) {
        try {
            int group = (Integer) Files.getAttribute(p, "unix:gid");
            for (String line : Files.readAllLines(Path.of("/proc/self/status"), java.nio.charset.StandardCharsets.US_ASCII)) {
                if (line.startsWith("Gid:") || line.startsWith("Groups:")) {
                    for (String id : line.substring(line.indexOf(':') + 1).trim().split("\\s+")) {
                        if (!id.isEmpty() && Integer.parseInt(id) == group) {
                            return true;
                        }
                    }
                }
            }
            return false;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false; // not Linux, or no unix attributes: no exception to the rule
        }
    }

    /** A key folder must not be writable by others (they could plant a key and make it active). */
    private static void checkFolder(Path dir, PermissionPolicy policy) {
        java.util.Set<java.nio.file.attribute.PosixFilePermission> perms = posixPermissions(dir);
        if (perms != null && perms.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_WRITE)) {
            insecure(dir, "key folder is writable by others ("
                    + java.nio.file.attribute.PosixFilePermissions.toString(perms) + ")", policy);
        }
    }

    private static java.util.Set<java.nio.file.attribute.PosixFilePermission> posixPermissions(Path p) {
        try {
            return Files.getPosixFilePermissions(p);
        } catch (UnsupportedOperationException notPosix) {
            return null;
        } catch (IOException e) {
            throw new KeyFileException(p, KeyFileException.Reason.UNREADABLE,
                    "cannot read permissions: " + e.getClass().getSimpleName());
        }
    }

    private static void insecure(Path p, String detail, PermissionPolicy policy) {
        if (policy == PermissionPolicy.REFUSE) {
            throw new KeyFileException(p, KeyFileException.Reason.INSECURE_PERMISSIONS, detail);
        }
        LOG.warn("{}: {}", p, detail);
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
                        + " bytes; " + ACCEPTED);
            }
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new KeyFileException(p, KeyFileException.Reason.UNREADABLE,
                    "cannot read " + what + ": " + e.getClass().getSimpleName());
        }
    }

    private static final String ACCEPTED =
            "accepted: 16 or 32 raw bytes, 32 or 64 hex characters, 24 or 44 base64 characters";

    /** Parses a key file; the returned array is a fresh copy the caller must zero. */
    static byte[] readKey(Path p) {
        byte[] raw = readBounded(p, "key file");
        byte[] text = null;
        try {
            int from = 0;
            int to = raw.length;
            while (from < to && isSpace(raw[from])) {
                from++;
            }
            while (to > from && isSpace(raw[to - 1])) {
                to--;
            }
            if (from == to) {
                throw new KeyFileException(p, KeyFileException.Reason.KEY_FILE_EMPTY,
                        raw.length == 0 ? "key file is empty" : "key file holds only whitespace");
            }
            text = Arrays.copyOfRange(raw, from, to);
            int n = text.length;
            if ((n == 32 || n == 64) && isHex(text)) {
                return decodeHex(text);
            }
            if ((n == 24 || n == 44) && isBase64(text)) {
                byte[] k;
                try {
                    k = Base64.getDecoder().decode(text);
                } catch (IllegalArgumentException notBase64) { // its message may quote key characters: drop it
                    k = new byte[0];
                }
                if (k.length == 16 || k.length == 32) {
                    return k;
                }
                Arrays.fill(k, (byte) 0);
            }
            if (raw.length == 16 || raw.length == 32) {
                return raw.clone();
            }
            throw new KeyFileException(p, KeyFileException.Reason.WRONG_LENGTH, "found " + raw.length
                    + " bytes (" + n + " without surrounding whitespace) that are neither raw key bytes nor valid"
                    + " hex/base64 of a 16/32-byte key; " + ACCEPTED);
        } finally {
            Arrays.fill(raw, (byte) 0);
            if (text != null) {
                Arrays.fill(text, (byte) 0);
            }
        }
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

    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }

    private static boolean isHex(byte[] t) {
        for (byte b : t) {
            if (Character.digit((char) (b & 0xFF), 16) < 0 || b < 0) {
                return false;
            }
        }
        return true;
    }

    private static byte[] decodeHex(byte[] t) {
        byte[] out = new byte[t.length / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) ((Character.digit(t[2 * i], 16) << 4) | Character.digit(t[2 * i + 1], 16));
        }
        return out;
    }

    private static boolean isBase64(byte[] t) {
        int n = t.length;
        int pad = 0;
        while (pad < 2 && t[n - 1 - pad] == '=') {
            pad++;
        }
        for (int i = 0; i < n - pad; i++) {
            byte b = t[i];
            boolean ok = (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '+'
                    || b == '/';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return "KeyRingSource[" + directory + ", " + current + "]";
    }
}
