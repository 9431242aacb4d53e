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

/** The peer and client credentials' file format, and the wrong files a new user writes. */
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
}
