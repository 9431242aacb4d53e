package io.queueenterprise.cli;

import io.queueenterprise.crypto.IdentityKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.HexFormat;

import static io.queueenterprise.cli.QeRun.qe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code qe identity}: one owner-only private key and one public key per name, printed; none overwritten; bad names refused. */
@org.junit.jupiter.api.Tag("unit")
class IdentityCommandTest {
    @TempDir
    Path tmp;

    @Test
    void writesAKeyPairPerNameOwnerOnlyPrintsThePublicKeysAndNeverOverwrites() throws Exception {
        Path out = tmp.resolve("identities");
        QeRun run = qe("identity", "--name", "replica-0", "--name", "replica-1", "--out", out.toString());
        assertEquals(0, run.exitCode(), run.out() + run.err());
        for (String name : new String[]{"replica-0", "replica-1"}) {
            Path key = out.resolve(name + ".key");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(key)));
            try (IdentityKey identity = IdentityKey.of(HexFormat.of().parseHex(Files.readString(key).strip()))) {
                assertEquals(identity.publicKeyText(), Files.readString(out.resolve(name + ".pub")).strip());
                assertTrue(run.out().contains(name + " " + identity.publicKeyText()), run.out());
                assertFalse(run.out().contains(Files.readString(key).strip()), "the private key is never printed");
            }
        }
        assertFalse(Arrays.equals(Files.readAllBytes(out.resolve("replica-0.pub")), Files.readAllBytes(out.resolve("replica-1.pub"))));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out)));
        QeRun again = qe("identity", "--name", "replica-1", "--out", out.toString());
        assertEquals(1, again.exitCode());
        assertTrue(again.err().contains("exists; not overwritten"), again.err());
    }

    @Test
    void aNameThatIsNoSafeFileNameIsRefusedBeforeAnythingIsWritten() {
        Path out = tmp.resolve("identities");
        for (String bad : new String[]{"../etc", "a b", ".hidden", "x/y"}) {
            QeRun run = qe("identity", "--name", "replica-0", "--name", bad, "--out", out.toString());
            assertEquals(2, run.exitCode(), bad);
            assertTrue(run.err().contains("is not a node id or client name"), run.err());
        }
        assertFalse(Files.exists(out), "nothing written");
    }
}
