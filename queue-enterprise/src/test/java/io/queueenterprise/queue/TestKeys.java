package io.queueenterprise.queue;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;

/** Test keys: random material, never printed. */
final class TestKeys {
    private static final SecureRandom RANDOM = new SecureRandom();

    private TestKeys() {
    }

    static byte[] randomMaterial() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    static KeyRing ring(int keyId) {
        return KeyRing.single(MasterKey.of(keyId, randomMaterial()));
    }

    /** The key file format (docs/crypto.md, "Key directory"): the material as hex text and a line end. */
    static byte[] hex(byte[] material) {
        return (java.util.HexFormat.of().formatHex(material) + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    /** Writes a key file in the layout of a mounted Kubernetes Secret and makes it active. */
    static void writeKeyFile(Path keyDir, int keyId, byte[] material) throws IOException {
        Files.createDirectories(keyDir);
        Files.write(keyDir.resolve(keyId + ".key"), hex(material));
        Files.writeString(keyDir.resolve("active"), Integer.toString(keyId));
    }
}
