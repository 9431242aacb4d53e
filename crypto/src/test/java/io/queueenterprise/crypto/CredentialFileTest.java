package io.queueenterprise.crypto;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The peer and client credentials' file format, and the wrong files a new user writes. */
@org.junit.jupiter.api.Tag("unit")
class CredentialFileTest {
    @TempDir
    Path dir;

    @Test
    void rawHexAndBase64ReadToTheSameSecret() throws Exception {
        byte[] secret = new byte[32];
        new Random(7).nextBytes(secret);
        Files.write(dir.resolve("raw"), secret);
        Files.writeString(dir.resolve("hex"), HexFormat.of().formatHex(secret) + "\n");
        Files.writeString(dir.resolve("b64"), "  " + Base64.getEncoder().encodeToString(secret) + "\n");
        for (String name : new String[]{"raw", "hex", "b64"}) {
            assertArrayEquals(secret, CredentialFile.read(dir.resolve(name), "peer credential", 32), name);
        }
    }

    @Test
    void aShortOrMissingFileIsRefusedNamingTheFileNotItsContent() throws Exception {
        Path shortFile = dir.resolve("short");
        Files.writeString(shortFile, "hunter2-secret", StandardCharsets.US_ASCII);
        var e = assertThrows(CredentialFile.UnusableCredentialException.class, () -> CredentialFile.read(shortFile, "client credential", 32));
        assertEquals("client credential file " + shortFile + " holds 14 bytes; at least 32 random bytes are needed (raw, hex or base64)", e.getMessage());
        assertFalse(e.getMessage().contains("hunter2"));
        Path missing = dir.resolve("absent");
        e = assertThrows(CredentialFile.UnusableCredentialException.class, () -> CredentialFile.read(missing, "peer credential", 32));
        assertEquals(true, e.getMessage().startsWith("peer credential file " + missing + " cannot be read"), e.getMessage());
    }
    /**
     * Issue 19: peer and client credential files at 0666 loaded silently. One others can write (or lying in a folder
     * others can write) is refused; one group or others can read loads with a warning.
     */
    @Test
    void aCredentialFileOthersCanWriteIsRefused() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Files.getFileAttributeView(dir, java.nio.file.attribute.PosixFileAttributeView.class) != null, "needs a POSIX file system");
        byte[] secret = new byte[32];
        new Random(8).nextBytes(secret);
        Path folder = Files.createDirectory(dir.resolve("credentials"));
        Path file = folder.resolve("peer-credential");
        Files.writeString(file, HexFormat.of().formatHex(secret));
        Files.setPosixFilePermissions(folder, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("r--------"));
        assertArrayEquals(secret, CredentialFile.read(file, "peer credential", 32), "control");

        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
        var e = assertThrows(CredentialFile.UnusableCredentialException.class, () -> CredentialFile.read(file, "peer credential", 32));
        assertTrue(e.getMessage().contains("peer credential file " + file) && e.getMessage().contains("INSECURE_PERMISSIONS")
                && e.getMessage().contains("rw-rw-rw-"), e.getMessage());

        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("r--------"));
        Files.setPosixFilePermissions(folder, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        e = assertThrows(CredentialFile.UnusableCredentialException.class, () -> CredentialFile.read(file, "client credential", 32));
        assertTrue(e.getMessage().contains("INSECURE_PERMISSIONS") && e.getMessage().contains(folder.toString()), e.getMessage());
        Files.setPosixFilePermissions(folder, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));

        // Readable by others: loaded, and said so (SLF4J, the test binding writes to System.err).
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        java.io.PrintStream originalErr = System.err;
        System.setErr(new java.io.PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            assertArrayEquals(secret, CredentialFile.read(file, "peer credential", 32));
        } finally {
            System.setErr(originalErr);
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("WARN") && log.contains(file.toString()) && log.contains("rw-r--r--"), log);
    }
}
