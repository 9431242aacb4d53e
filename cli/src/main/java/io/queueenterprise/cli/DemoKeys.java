package io.queueenterprise.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.stream.Stream;

/**
 * The demo's key directory, in the layout of a mounted Kubernetes Secret ({@code 1.key} and
 * {@code active}). A directory that already holds anything is used as it is: a key is never
 * overwritten, so data written under it stays readable.
 */
record DemoKeys(Path directory, boolean created) {

    static DemoKeys ensure(Path keyDir) throws IOException {
        if (Files.isDirectory(keyDir) && !isEmpty(keyDir)) {
            return new DemoKeys(keyDir, false);
        }
        if (!Files.isDirectory(keyDir)) {
            Files.createDirectories(keyDir.getParent());
            OwnerOnlyFiles.createDirectory(keyDir);
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

    /** Fails rather than overwrite; owner-only from its creation ({@link OwnerOnlyFiles#createNew}). */
    private static void createNew(Path file, byte[] content) throws IOException {
        try {
            OwnerOnlyFiles.createNew(file, content);
        } catch (FileAlreadyExistsException e) {
            throw new IOException(file + " appeared while the demo key was being written; left as it is", e);
        }
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.findAny().isEmpty();
        }
    }
}
