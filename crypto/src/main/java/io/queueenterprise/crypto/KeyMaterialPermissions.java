package io.queueenterprise.crypto;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The permission rules for key material: key files, the {@code active} file, credential files and the folders that
 * hold them (docs/crypto.md, "Key directory"). Files are judged by what their links resolve to: in a Kubernetes Secret
 * volume the names are links ({@code lrwxrwxrwx}, whose own mode means nothing) into the version folder {@code ..data}
 * points to, and those real files and folders are what is checked.
 *
 * <ul>
 *   <li><b>Writable by others</b> (a file, or a folder without the sticky bit): refused under every policy. Whoever can
 *       write there can swap a key or plant one before a rotation; no deployment needs it.</li>
 *   <li><b>Secret files</b> (keys, credentials): no access at all for group or others, except the kubelet's fsGroup
 *       projection in a Secret volume ({@code 0440}, the file's group one of this process's own).</li>
 *   <li><b>The {@code active} file</b> names a key id, no secret: writable by its owner alone.</li>
 *   <li><b>Folders</b>: writable by their owner alone; one exception, a sticky folder that holds a Secret volume's
 *       {@code ..data} link (kubelet's tmpfs root, {@code 1777}): others cannot replace entries they do not own there,
 *       and nothing is read from it but through {@code ..data}.</li>
 * </ul>
 * Anything else loose is a warning, or refused under {@link KeyRingSource.PermissionPolicy#REFUSE}.
 */
final class KeyMaterialPermissions {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(KeyRingSource.class);
    private static final int STICKY = 01000;

    private KeyMaterialPermissions() {
    }

    /** A key or credential file, after following links. */
    static void checkSecretFile(Path file, String what, KeyRingSource.PermissionPolicy policy, boolean secretVolume) {
        Set<PosixFilePermission> perms = permissions(file);
        if (perms == null) {
            return;
        }
        if (perms.contains(PosixFilePermission.OTHERS_WRITE)) {
            refuse(file, what + " is writable by others (" + text(perms) + "): anyone could replace it; make it 0400");
        }
        boolean groupOrOthers = perms.contains(PosixFilePermission.GROUP_READ) || perms.contains(PosixFilePermission.GROUP_WRITE)
                || perms.contains(PosixFilePermission.GROUP_EXECUTE) || perms.contains(PosixFilePermission.OTHERS_READ)
                || perms.contains(PosixFilePermission.OTHERS_EXECUTE);
        if (!groupOrOthers) {
            return;
        }
        boolean fsGroupProjection = secretVolume && perms.contains(PosixFilePermission.GROUP_READ)
                && !perms.contains(PosixFilePermission.GROUP_WRITE) && !perms.contains(PosixFilePermission.GROUP_EXECUTE)
                && !perms.contains(PosixFilePermission.OTHERS_READ) && !perms.contains(PosixFilePermission.OTHERS_EXECUTE)
                && inOwnGroup(file);
        if (!fsGroupProjection) { // 0440 root:<fsGroup>: how the kubelet projects defaultMode 0400 for a non-root pod
            insecure(file, what + " is accessible to group or others (" + text(perms)
                    + "); make it 0400 (Kubernetes: defaultMode: 0400; with the pod's fsGroup the kubelet's 0440"
                    + " root:<fsGroup> is accepted)", policy);
        }
    }

    /** The {@code active} file: not secret, but whoever writes it picks the key new excerpts are sealed with. */
    static void checkActiveFile(Path file, KeyRingSource.PermissionPolicy policy) {
        Set<PosixFilePermission> perms = permissions(file);
        if (perms == null) {
            return;
        }
        if (perms.contains(PosixFilePermission.OTHERS_WRITE)) {
            refuse(file, "the active file is writable by others (" + text(perms) + "); make it 0400");
        }
        if (perms.contains(PosixFilePermission.GROUP_WRITE)) {
            insecure(file, "the active file is writable by its group (" + text(perms) + "); make it 0400", policy);
        }
    }

    /**
     * A folder of key material. {@code stickyAllowed}: the folder holding a Secret volume's {@code ..data} link, where a
     * sticky bit keeps others from replacing what they do not own.
     */
    static void checkFolder(Path dir, KeyRingSource.PermissionPolicy policy, boolean stickyAllowed) {
        Set<PosixFilePermission> perms = permissions(dir);
        if (perms == null) {
            return;
        }
        boolean othersWrite = perms.contains(PosixFilePermission.OTHERS_WRITE);
        boolean groupWrite = perms.contains(PosixFilePermission.GROUP_WRITE);
        if (!othersWrite && !groupWrite) {
            return;
        }
        if (stickyAllowed && sticky(dir)) {
            return;
        }
        String detail = "folder of key material is writable by " + (othersWrite ? "others" : "its group") + " ("
                + text(perms) + "): a key could be replaced or planted; make it 0700 (or 0500)";
        if (othersWrite) {
            refuse(dir, detail);
        }
        insecure(dir, detail, policy);
    }

    /** The real folder a file resolves to, when it is not the folder its name is in. */
    static Path realParent(Path file) {
        try {
            return file.toRealPath().getParent();
        } catch (IOException e) {
            throw new KeyFileException(file, KeyFileException.Reason.UNREADABLE,
                    "cannot resolve: " + e.getClass().getSimpleName());
        }
    }

    private static boolean sticky(Path dir) {
        try {
            return ((Integer) Files.getAttribute(dir, "unix:mode") & STICKY) != 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }

    /** Whether the file's group is one of this process's groups (Linux: {@code /proc/self/status}); false elsewhere. */
    private static boolean inOwnGroup(Path p) {
        try {
            int group = (Integer) Files.getAttribute(p, "unix:gid");
            for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
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

    private static Set<PosixFilePermission> permissions(Path p) {
        try {
            return Files.getPosixFilePermissions(p); // follows links: the file's mode, not the link's
        } catch (UnsupportedOperationException notPosix) {
            return null;
        } catch (IOException e) {
            throw new KeyFileException(p, KeyFileException.Reason.UNREADABLE,
                    "cannot read permissions: " + e.getClass().getSimpleName());
        }
    }

    private static String text(Set<PosixFilePermission> perms) {
        return PosixFilePermissions.toString(perms);
    }

    private static void refuse(Path p, String detail) {
        throw new KeyFileException(p, KeyFileException.Reason.INSECURE_PERMISSIONS, detail);
    }

    private static void insecure(Path p, String detail, KeyRingSource.PermissionPolicy policy) {
        if (policy == KeyRingSource.PermissionPolicy.REFUSE) {
            refuse(p, detail);
        }
        LOG.warn("{}: {}", p, detail);
    }
}
