package io.queueenterprise.cli;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/** Small file helpers of the command line. */
final class DemoFiles {
    private DemoFiles() {
    }

    /** Deletes a directory tree the demo created; a file that is already gone is no error. */
    static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null && !(e instanceof NoSuchFileException)) {
                    throw e;
                }
                Files.deleteIfExists(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /** Files that hold secrets: keys ({@code N.key}) and the local cluster's credentials and admin token. */
    static boolean isSecret(Path file) {
        String name = file.getFileName().toString();
        return name.endsWith(".key") || name.equals("peer-credential") || name.equals("client-credential")
                || name.equals("admin-token");
    }

    /**
     * Deletes a temporary directory that holds key material: the key directory {@code keys} first (so an interrupted
     * deletion never leaves the key behind), and every secret ({@link #isSecret}) overwritten with zeros before it is
     * deleted (best effort: a journaling or copy-on-write file system may keep old blocks).
     */
    static void deleteWithSecrets(Path root, Path keys) throws IOException {
        if (keys != null && Files.isDirectory(keys)) {
            try (java.util.stream.Stream<Path> entries = Files.list(keys)) {
                for (Path file : entries.toList()) {
                    wipe(file);
                }
            }
            deleteRecursively(keys);
        }
        if (!Files.exists(root)) {
            return;
        }
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                if (attrs.isRegularFile() && isSecret(file)) {
                    wipe(file);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        deleteRecursively(root);
    }

    /** Overwrites a regular file with zeros, to the disk, before anything deletes it. */
    private static void wipe(Path file) throws IOException {
        if (!Files.isRegularFile(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
            java.nio.ByteBuffer zeros = java.nio.ByteBuffer.allocate(4096);
            long size = channel.size();
            for (long at = 0; at < size; at += zeros.capacity()) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), size - at));
                while (zeros.hasRemaining()) {
                    channel.write(zeros, at + zeros.position());
                }
            }
            channel.force(true);
        }
    }

    /** An I/O failure in one phrase: the file and what went wrong (the JDK puts the reason in the type). */
    static String describe(Exception e) {
        if (e instanceof FileSystemException f) {
            String reason = f instanceof NoSuchFileException ? "no such file or directory"
                    : f instanceof AccessDeniedException ? "permission denied"
                    : f instanceof FileAlreadyExistsException ? "already exists"
                    : f.getReason() != null ? f.getReason() : f.getClass().getSimpleName();
            return f.getFile() + ": " + reason;
        }
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }
}
