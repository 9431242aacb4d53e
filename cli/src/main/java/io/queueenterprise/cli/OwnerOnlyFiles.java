package io.queueenterprise.cli;

import io.queueenterprise.replication.config.NodeConfigReader;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Secret material the commands write ({@code qe write-keys}, {@code qe identity}, the demo's key): owner-only from the
 * moment a file or folder exists (the permissions are given at creation, never by a later chmod), never overwriting,
 * under names checked before anything reaches the file system.
 */
final class OwnerOnlyFiles {
    private static final Set<PosixFilePermission> OWNER_ONLY_DIR = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");

    private OwnerOnlyFiles() {
    }

    /** Refuses, before anything is written, a name that would become a file name and is not a safe name ("../x", "a b"). */
    static void requireSafeNames(CommandLine commandLine, String option, String what, List<String> names) {
        for (String name : names) {
            if (!NodeConfigReader.isSafeName(name)) {
                throw new CommandLine.ParameterException(commandLine, option + ": '" + name + "' is not " + what + ": "
                        + NodeConfigReader.SAFE_NAME_RULE);
            }
        }
    }

    /** The folder and any missing parents, those created owner-only. */
    static void createDirectories(Path dir) throws IOException {
        Files.createDirectories(dir, ownerOnly(dir.toAbsolutePath().getParent(), OWNER_ONLY_DIR));
    }

    /** One folder, owner-only; its parent must exist. */
    static void createDirectory(Path dir) throws IOException {
        Files.createDirectory(dir, ownerOnly(dir.toAbsolutePath().getParent(), OWNER_ONLY_DIR));
    }

    /**
     * A new owner-only file holding {@code content}.
     *
     * @throws java.nio.file.FileAlreadyExistsException when it exists: nothing is overwritten
     */
    static void createNew(Path file, byte[] content) throws IOException {
        try (SeekableByteChannel channel = Files.newByteChannel(file,
                EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                ownerOnly(file.toAbsolutePath().getParent(), OWNER_ONLY_FILE))) {
            ByteBuffer buffer = ByteBuffer.wrap(content);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
        }
    }

    private static FileAttribute<?>[] ownerOnly(Path near, Set<PosixFilePermission> permissions) throws IOException {
        Path existing = near;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing != null && !Files.getFileStore(existing).supportsFileAttributeView("posix")) {
            return new FileAttribute<?>[0]; // e.g. Windows: the user's profile ACLs apply
        }
        return new FileAttribute<?>[]{PosixFilePermissions.asFileAttribute(permissions)};
    }
}
