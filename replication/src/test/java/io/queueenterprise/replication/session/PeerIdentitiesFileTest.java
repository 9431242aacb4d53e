package io.queueenterprise.replication.session;

import io.queueenterprise.crypto.IdentityKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The peer-identities file: pins for peers the node document leaves unpinned, re-read as a mounted ConfigMap changes
 * (its {@code ..data} link swapped). A malformed file is refused whole, the pins in force kept; lines that cannot
 * apply (an unknown peer, a conflict with the document, this node under another key) are left out, the rest applied.
 * Four replicas: replica-0 is this node; replica-1 is pinned by the document; replica-2 and replica-3 are not.
 */
@org.junit.jupiter.api.Tag("unit")
class PeerIdentitiesFileTest {
    private static final List<String> IDS = List.of("replica-0", "replica-1", "replica-2", "replica-3");
    private final SecureRandom random = new SecureRandom();
    private final IdentityKey[] keys = new IdentityKey[4];
    private PeerIdentities identities;

    @TempDir
    Path tmp;

    @BeforeEach
    void identities() {
        for (int i = 0; i < keys.length; i++) {
            keys[i] = IdentityKey.generate(random);
        }
        identities = PeerIdentities.of(IdentityKey.of(seed(keys[0])), Arrays.asList(null, keys[1].publicKey(), null, null), 0);
    }

    @AfterEach
    void close() {
        identities.close();
        for (IdentityKey k : keys) {
            k.close();
        }
    }

    @Test
    void pinsApplyToUnpinnedPeersAndLinesThatCannotApplyAreLeftOut() throws Exception {
        IdentityKey stranger = IdentityKey.generate(random);
        String text = """
                # rendered by the operator

                replica-2 %s
                replica-3\t%s
                replica-1 %s
                replica-0 %s
                replica-9 %s
                """.formatted(pub(keys[2]), hex(keys[3]), pub(stranger), pub(stranger), pub(keys[2]));
        PeerIdentitiesFile.Pins pins = PeerIdentitiesFile.parse(text, IDS, identities, 0);
        assertArrayEquals(keys[2].publicKey(), pins.pins()[2]);
        assertArrayEquals(keys[3].publicKey(), pins.pins()[3], "hex as well as base64");
        assertNull(pins.pins()[1], "the document's pin is not overridden");
        assertNull(pins.pins()[0]);
        assertEquals(3, pins.ignored().size(), pins.ignored().toString());
        assertTrue(pins.ignored().get(0).startsWith("line 5: pins 'replica-1'"), pins.ignored().get(0));
        assertTrue(pins.ignored().get(1).startsWith("line 6: pins this node (replica-0)"), pins.ignored().get(1));
        assertTrue(pins.ignored().get(2).startsWith("line 7: 'replica-9' is not among the peers"), pins.ignored().get(2));

        assertTrue(identities.applyFilePins(pins.pins()));
        assertArrayEquals(keys[1].publicKey(), identities.pinnedKey(1), "the document's pin stays");
        assertArrayEquals(keys[2].publicKey(), identities.pinnedKey(2));
        assertFalse(identities.applyFilePins(pins.pins()), "the same pins again change nothing");
    }

    @Test
    void aLineThatAgreesWithTheDocumentOrNamesThisNodeByItsOwnKeyIsNotAConflict() throws Exception {
        PeerIdentitiesFile.Pins pins = PeerIdentitiesFile.parse("replica-1 " + pub(keys[1]) + "\nreplica-0 " + pub(keys[0]) + "\n",
                IDS, identities, 0);
        assertEquals(List.of(), pins.ignored());
    }

    @Test
    void aMalformedFileIsRefusedWholeNamingTheLine() {
        String good = "replica-2 " + pub(keys[2]) + "\n";
        assertMalformed(good + "replica-3\n", 2, "not '<peerId> <public key>' (1 fields)");
        assertMalformed(good + "replica-3 " + pub(keys[3]) + " extra\n", 2, "not '<peerId> <public key>' (3 fields)");
        assertMalformed("# pins\n" + good + "replica-3 not-a-key\n", 3, "the key of 'replica-3' is not an Ed25519 public key");
        assertMalformed(good + "replica-2 " + pub(keys[2]) + "\n", 2, "peer 'replica-2' is pinned twice");
        assertMalformed(good + "replica-9 " + pub(keys[3]) + "\nreplica-9 " + pub(keys[3]) + "\n", 3, "peer 'replica-9' is pinned twice");
    }

    @Test
    void theWatcherKeepsThePinsInForceWhenTheFileTurnsMalformedAndCountsIt() throws Exception {
        Path file = tmp.resolve("peers");
        try (PeerIdentitiesWatcher watcher = new PeerIdentitiesWatcher(file, identities, IDS, 0, "replica-0")) {
            watcher.checkOnce();
            assertNull(identities.pinnedKey(2), "absent: no pins yet");
            Files.writeString(file, "replica-2 " + pub(keys[2]) + "\n");
            watcher.checkOnce();
            assertArrayEquals(keys[2].publicKey(), identities.pinnedKey(2));
            int generation = identities.generation();

            // replica-3 would be pinned by the first line, but the second is malformed: nothing of it applies
            Files.writeString(file, "replica-3 " + pub(keys[3]) + "\nreplica-2 " + pub(keys[2]).substring(1) + "x\n");
            watcher.checkOnce();
            assertEquals(1, watcher.refusals());
            assertNull(identities.pinnedKey(3), "not partially applied");
            assertArrayEquals(keys[2].publicKey(), identities.pinnedKey(2), "the pins in force stay");
            assertEquals(generation, identities.generation());
            watcher.checkOnce();
            assertEquals(1, watcher.refusals(), "the same content is not refused twice");

            Files.delete(file);
            watcher.checkOnce();
            assertArrayEquals(keys[2].publicKey(), identities.pinnedKey(2), "absent for an instant: the pins stay");
        }
    }

    @Test
    void aConfigMapSwapOfItsDataLinkIsPickedUp() throws Exception {
        // As the kubelet mounts a ConfigMap: peers -> ..data/peers, ..data -> ..<timestamp>, swapped by a rename.
        Path mount = Files.createDirectories(tmp.resolve("mount"));
        Path first = Files.createDirectories(mount.resolve("..2026_11_26_22_00_00.1"));
        Files.writeString(first.resolve("peers"), "replica-2 " + pub(keys[2]) + "\n");
        Files.createSymbolicLink(mount.resolve("..data"), first.getFileName());
        Files.createSymbolicLink(mount.resolve("peers"), Path.of("..data/peers"));
        try (PeerIdentitiesWatcher watcher = new PeerIdentitiesWatcher(mount.resolve("peers"), identities, IDS, 0, "replica-0")) {
            watcher.checkOnce();
            assertArrayEquals(keys[2].publicKey(), identities.pinnedKey(2));
            assertNull(identities.pinnedKey(3));

            Path second = Files.createDirectories(mount.resolve("..2026_11_26_22_01_00.2"));
            Files.writeString(second.resolve("peers"), "replica-2 " + pub(keys[2]) + "\nreplica-3 " + pub(keys[3]) + "\n");
            Files.createSymbolicLink(mount.resolve("..data_tmp"), second.getFileName());
            Files.move(mount.resolve("..data_tmp"), mount.resolve("..data"), StandardCopyOption.ATOMIC_MOVE);
            Files.delete(first.resolve("peers"));
            Files.delete(first);
            watcher.checkOnce();
            assertArrayEquals(keys[3].publicKey(), identities.pinnedKey(3), "the new content, through the swapped link");
        }
    }

    private void assertMalformed(String text, int line, String problem) {
        PeerIdentitiesFile.MalformedException e = assertThrows(PeerIdentitiesFile.MalformedException.class,
                () -> PeerIdentitiesFile.parse(text, IDS, identities, 0));
        assertEquals(line, e.line(), e.getMessage());
        assertTrue(e.getMessage().startsWith("line " + line + ": " + problem), e.getMessage());
    }

    private static String pub(IdentityKey k) {
        return k.publicKeyText();
    }

    private static String hex(IdentityKey k) {
        return java.util.HexFormat.of().formatHex(k.publicKey());
    }

    private static byte[] seed(IdentityKey k) {
        return java.util.HexFormat.of().parseHex(k.seedHex());
    }
}
