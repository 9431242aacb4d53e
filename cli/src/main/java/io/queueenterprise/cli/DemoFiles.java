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
