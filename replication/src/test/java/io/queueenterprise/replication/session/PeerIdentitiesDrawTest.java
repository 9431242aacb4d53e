package io.queueenterprise.replication.session;

import io.queueenterprise.crypto.IdentityKey;
import io.queueenterprise.replication.ReplicationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * drawIdentityKeyIfAbsent: a node whose identity key file is absent draws one into it, owner-only from its creation,
 * in the format {@code qe identity} writes (the seed in hex, read by the same reader); the next start reads that same
 * key. Without the setting an absent file is refused as before.
 */
@org.junit.jupiter.api.Tag("unit")
class PeerIdentitiesDrawTest {
    @TempDir
    Path tmp;

    private static final List<byte[]> UNPINNED = Arrays.asList(null, null, null);

    @Test
    void anAbsentKeyFileIsDrawnOwnerOnlyAndTheNextStartReadsTheSameKey() throws Exception {
        Path file = tmp.resolve("identity.key");
        byte[] first;
        try (PeerIdentities drawn = PeerIdentities.load(file, true, UNPINNED, 0, "replica-0")) {
            first = drawn.ownPublicKeyBytes();
            assertTrue(drawn.persistent());
        }
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertTrue(Files.readString(file).matches("[0-9a-f]{64}"), "the seed in hex, as qe identity writes it");
        try (IdentityKey read = IdentityKey.load(file, "node identity key")) {
            assertArrayEquals(first, read.publicKey(), "the crypto module's reader reads it");
        }
        try (PeerIdentities again = PeerIdentities.load(file, true, UNPINNED, 0, "replica-0")) {
            assertArrayEquals(first, again.ownPublicKeyBytes(), "a second start reads the key drawn, draws no other");
        }
    }

    @Test
    void aPresentFileIsReadNeverRedrawn() throws Exception {
        Path file = tmp.resolve("identity.key");
        try (IdentityKey existing = IdentityKey.generate(new java.security.SecureRandom())) {
            Files.writeString(file, existing.seedHex(), java.nio.file.StandardOpenOption.CREATE_NEW);
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            try (PeerIdentities read = PeerIdentities.load(file, true, UNPINNED, 0, "replica-0")) {
                assertArrayEquals(existing.publicKey(), read.ownPublicKeyBytes(), "a present file is read, never redrawn");
            }
        }
    }

    @Test
    void aPresentFileOthersCanReadIsRefusedAsBefore() throws Exception {
        Path file = tmp.resolve("identity.key");
        try (IdentityKey existing = IdentityKey.generate(new java.security.SecureRandom())) {
            Files.writeString(file, existing.seedHex());
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
        }
        assertThrows(ReplicationException.class, () -> PeerIdentities.load(file, true, UNPINNED, 0, "replica-0"));
    }

    @Test
    void withoutTheSettingAnAbsentFileIsRefused() {
        Path file = tmp.resolve("identity.key");
        ReplicationException e = assertThrows(ReplicationException.class,
                () -> PeerIdentities.load(file, false, UNPINNED, 0, "replica-0"));
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
        assertFalse(Files.exists(file), "nothing drawn");
    }

    @Test
    void withoutAFileTheKeyIsDrawnPerRunAndNotPersistent() {
        try (PeerIdentities perRun = PeerIdentities.load(null, false, UNPINNED, 0, "replica-0")) {
            assertFalse(perRun.persistent());
        }
    }
}
