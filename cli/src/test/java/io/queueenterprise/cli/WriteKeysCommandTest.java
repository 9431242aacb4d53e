package io.queueenterprise.cli;

import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.crypto.WriteKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;

import static io.queueenterprise.cli.QeRun.qe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code qe write-keys}: one owner-only file per queue and master key, each the key WriteKeys derives; none overwritten. */
@org.junit.jupiter.api.Tag("unit")
class WriteKeysCommandTest {
    @TempDir
    Path tmp;

    @Test
    void writesEachQueuesWriteKeyOfEachMasterKeyOwnerOnlyAndNeverOverwrites() throws Exception {
        Path keys = Files.createDirectory(tmp.resolve("keys"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        byte[][] material = new byte[3][];
        for (int id = 1; id <= 2; id++) {
            material[id] = new byte[32];
            new SecureRandom().nextBytes(material[id]);
            Path file = Files.createFile(keys.resolve(id + ".key"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(file, HexFormat.of().formatHex(material[id]) + "\n");
        }
        Files.writeString(Files.createFile(keys.resolve("active"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rw-------"))), "2");
        Path out = tmp.resolve("write-keys");
        QeRun run = qe("write-keys", "--keys", keys.toString(), "--queue", "orders", "--queue", "payments", "--out", out.toString());
        assertEquals(0, run.exitCode(), run.out() + run.err());
        try (var files = Files.list(out)) {
            assertEquals(4, files.count());
        }
        for (String queue : new String[]{"orders", "payments"}) {
            for (int id = 1; id <= 2; id++) {
                Path file = out.resolve(queue + "." + id + ".key");
                assertEquals(HexFormat.of().formatHex(WriteKeys.derive(MasterKey.of(id, material[id]), queue)),
                        Files.readString(file), file.toString());
                assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
            }
        }
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out)));
        QeRun again = qe("write-keys", "--keys", keys.toString(), "--queue", "orders", "--out", out.toString());
        assertEquals(1, again.exitCode());
        assertTrue(again.err().contains("exists; not overwritten"), again.err());
    }

    @Test
    void aQueueNameThatIsNoSafeFileNameIsRefusedBeforeAnythingIsWritten() throws Exception {
        Path keys = Files.createDirectory(tmp.resolve("keys"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        byte[] material = new byte[32];
        new SecureRandom().nextBytes(material);
        Files.writeString(Files.createFile(keys.resolve("1.key"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rw-------"))), HexFormat.of().formatHex(material));
        Files.writeString(Files.createFile(keys.resolve("active"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rw-------"))), "1");
        Path out = tmp.resolve("nested/write-keys");
        for (String bad : new String[]{"../escaped", "Bad Name!", ".hidden", "a/b", ""}) {
            QeRun run = qe("write-keys", "--keys", keys.toString(), "--queue", "orders", "--queue", bad, "--out", out.toString());
            assertEquals(2, run.exitCode(), bad + ": " + run.out() + run.err());
            assertTrue(run.err().contains("--queue: '" + bad + "' is not a queue name"), run.err());
        }
        assertTrue(Files.notExists(out), "nothing written for a refused command line, not even the good queue's key");
        assertTrue(Files.notExists(tmp.resolve("nested/escaped.1.key")));
    }
}
