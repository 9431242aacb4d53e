package io.queueenterprise.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The demo's key directory, in the layout of a mounted Kubernetes Secret ({@code 1.key} and
 * {@code active}). A directory that already holds anything is used as it is: a key is never
 * overwritten, so data written under it stays readable.
 */
record DemoKeys(Path directory, boolean created) {
    private static final Set<PosixFilePermission> OWNER_ONLY_DIR = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");

    static DemoKeys ensure(Path keyDir) throws IOException {
        if (Files.isDirectory(keyDir) && !isEmpty(keyDir)) {
            return new DemoKeys(keyDir, false);
        }
        if (!Files.isDirectory(keyDir)) {
            Files.createDirectories(keyDir.getParent());
            Files.createDirectory(keyDir, ownerOnly(keyDir.getParent(), OWNER_ONLY_DIR));
        }
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        // The key file format (docs/crypto.md): the key as hex digits and a line end.
        byte[] hex = new byte[2 * key.length + 1];
        try {
            for (int i = 0; i < key.length; i++) {
                hex[2 * i] = (byte) Character.forDigit((key[i] >> 4) & 0xF, 16);
                hex[2 * i + 1] = (byte) Character.forDigit(key[i] & 0xF, 16);
            }
            hex[hex.length - 1] = '\n';
            createNew(keyDir.resolve("1.key"), hex);
        } finally {
            Arrays.fill(key, (byte) 0);
            Arrays.fill(hex, (byte) 0);
        }
        // Written after the key: an 'active' file never names a key that is not complete on disk.
        createNew(keyDir.resolve("active"), "1\n".getBytes(StandardCharsets.US_ASCII));
        return new DemoKeys(keyDir, true);
    }

    /**
     * CREATE_NEW: fails rather than overwrite. The permissions are given at creation, so the file is
     * never readable by others, not even between its creation and a chmod.
     */
    private static void createNew(Path file, byte[] content) throws IOException {
        try (SeekableByteChannel channel = Files.newByteChannel(file,
                EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                ownerOnly(file.getParent(), OWNER_ONLY_FILE))) {
            ByteBuffer buffer = ByteBuffer.wrap(content);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
        } catch (FileAlreadyExistsException e) {
            throw new IOException(file + " appeared while the demo key was being written; left as it is", e);
        }
    }

    private static FileAttribute<?>[] ownerOnly(Path dir, Set<PosixFilePermission> permissions) throws IOException {
        if (!Files.getFileStore(dir).supportsFileAttributeView("posix")) {
            return new FileAttribute<?>[0]; // e.g. Windows: the user's profile ACLs apply
        }
        return new FileAttribute<?>[]{PosixFilePermissions.asFileAttribute(permissions)};
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.findAny().isEmpty();
        }
    }
}
