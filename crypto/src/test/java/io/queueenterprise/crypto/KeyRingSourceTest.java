package io.queueenterprise.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.queueenterprise.crypto.KeyFileException.Reason;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KeyRingSourceTest {
    @TempDir
    Path dir;

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static void write(Path p, byte[] b) throws IOException {
        Files.write(p, b);
    }

    static void write(Path p, String s) throws IOException {
        Files.writeString(p, s, StandardCharsets.US_ASCII);
    }

    private KeyFileException fails(Reason reason) {
        KeyFileException e = assertThrows(KeyFileException.class, () -> KeyRingSource.read(dir));
        assertEquals(reason, e.reason(), e.getMessage());
        return e;
    }

    @Test
    void rawHexAndBase64FormsWithWhitespace() throws IOException {
        byte[] k1 = random(16, 1);
        byte[] k2 = random(32, 2);
        byte[] k3 = random(16, 3);
        byte[] k4 = random(32, 4);
        byte[] k5 = random(16, 5);
        write(dir.resolve("1.key"), k1);
        write(dir.resolve("2.key"), k2);
        write(dir.resolve("3.key"), "  " + HexFormat.of().formatHex(k3) + "\n");
        write(dir.resolve("4.key"), HexFormat.of().withUpperCase().formatHex(k4) + "\r\n");
        write(dir.resolve("5.key"), Base64.getEncoder().encodeToString(k5) + "\n");
        write(dir.resolve("6.key"), "\t" + Base64.getEncoder().encodeToString(k2) + "\n");
        write(dir.resolve("active"), "4\n");
        write(dir.resolve("README"), "ignored");
        write(dir.resolve(".hidden.key"), "ignored: dotfile");
        KeyRing ring = KeyRingSource.read(dir);
        assertEquals(4, ring.activeKeyId());
        assertArrayEquals(new int[] {1, 2, 3, 4, 5, 6}, ring.keyIds());
        assertArrayEquals(k1, ring.key(1).material());
        assertArrayEquals(k2, ring.key(2).material());
        assertArrayEquals(k3, ring.key(3).material());
        assertArrayEquals(k4, ring.key(4).material());
        assertArrayEquals(k5, ring.key(5).material());
        assertArrayEquals(k2, ring.key(6).material());
        assertEquals(32, ring.key(6).length());
    }

    @Test
    void toStringNeverShowsKeyBytes() throws IOException {
        byte[] k = random(32, 9);
        write(dir.resolve("7.key"), HexFormat.of().formatHex(k));
        write(dir.resolve("active"), "7");
        KeyRingSource src = new KeyRingSource(dir);
        KeyRing ring = src.load();
        MasterKey mk = ring.key(7);
        QueueKey qk = QueueKey.derive(mk, SealOpenTest.QUEUE, CipherMode.AES_128_CTR_POLY1305);
        for (String s : new String[] {mk.toString(), ring.toString(), src.toString(), qk.toString()}) {
            for (byte[] secret : new byte[][] {k, qk.aesKey()}) {
                String hex = HexFormat.of().formatHex(secret);
                assertFalse(s.toLowerCase().contains(hex.substring(0, 8)), s);
                assertFalse(s.contains(Base64.getEncoder().encodeToString(secret).substring(0, 8)), s);
            }
        }
        assertEquals("MasterKey[id=7, 32 bytes]", mk.toString());
        assertEquals("KeyRing[active=7, ids=[7]]", ring.toString());
        byte[] internal = mk.material();
        mk.destroy();
        assertTrue(mk.isDestroyed());
        assertArrayEquals(new byte[32], internal);
        assertEquals("MasterKey[id=7, 32 bytes, destroyed]", mk.toString());
        assertThrows(IllegalStateException.class, mk::material);
    }

    @Test
    void directoryMissing() {
        KeyFileException e = assertThrows(KeyFileException.class, () -> KeyRingSource.read(dir.resolve("nope")));
        assertEquals(Reason.DIRECTORY_MISSING, e.reason());
        assertEquals(dir.resolve("nope"), e.path());
        assertTrue(e.getMessage().contains(dir.resolve("nope").toString()));
    }

    @Test
    void noKeys() throws IOException {
        write(dir.resolve("active"), "1");
        fails(Reason.NO_KEYS);
    }

    @Test
    void emptyAndWhitespaceOnlyKeyFiles() throws IOException {
        write(dir.resolve("active"), "1");
        write(dir.resolve("1.key"), new byte[0]);
        assertEquals(dir.resolve("1.key"), fails(Reason.KEY_FILE_EMPTY).path());
        write(dir.resolve("1.key"), " \n\n");
        fails(Reason.KEY_FILE_EMPTY);
    }

    @Test
    void wrongLengthNamesLengthsButNotContent() throws IOException {
        write(dir.resolve("active"), "1");
        for (String content : new String[] {"abcdefabcdefabcdefabcdef01234", // 29 chars
                "0123456789abcdef0123456789abcdeg", // 32 chars, not hex, not 16/32 raw after newline below
                "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4\n"}) {
            write(dir.resolve("1.key"), content + "\n");
            KeyFileException e = fails(Reason.WRONG_LENGTH);
            assertTrue(e.getMessage().contains("found " + (content.length() + 1) + " bytes"), e.getMessage());
            assertTrue(e.getMessage().contains("16 or 32 raw bytes"), e.getMessage());
            assertFalse(e.getMessage().contains(content.strip().substring(0, 6)), e.getMessage());
        }
        write(dir.resolve("1.key"), random(24, 1));
        fails(Reason.WRONG_LENGTH);
        write(dir.resolve("1.key"), random(10_000, 1));
        fails(Reason.WRONG_LENGTH);
    }

    @Test
    void unreadableKeyFiles() throws IOException {
        write(dir.resolve("active"), "1");
        Files.createSymbolicLink(dir.resolve("1.key"), dir.resolve("..data/1.key")); // dangling
        assertEquals(dir.resolve("1.key"), fails(Reason.UNREADABLE).path());
        Files.delete(dir.resolve("1.key"));
        Files.createDirectory(dir.resolve("1.key"));
        fails(Reason.UNREADABLE);
    }

    @Test
    void badNamesAndIdOutOfRange() throws IOException {
        write(dir.resolve("active"), "1");
        write(dir.resolve("1.key"), random(16, 1));
        write(dir.resolve("65536.key"), random(16, 1));
        fails(Reason.ID_OUT_OF_RANGE);
        Files.delete(dir.resolve("65536.key"));
        write(dir.resolve("one.key"), random(16, 1));
        fails(Reason.BAD_FILE_NAME);
        Files.delete(dir.resolve("one.key"));
        write(dir.resolve("01.key"), random(16, 2));
        fails(Reason.DUPLICATE_KEY_ID);
        Files.delete(dir.resolve("01.key"));
        write(dir.resolve("65535.key"), random(16, 1));
        assertEquals(2, KeyRingSource.read(dir).size());
    }

    @Test
    void activeFileProblems() throws IOException {
        write(dir.resolve("1.key"), random(16, 1));
        fails(Reason.ACTIVE_MISSING);
        write(dir.resolve("active"), "");
        fails(Reason.ACTIVE_NOT_A_NUMBER);
        write(dir.resolve("active"), "one\n");
        fails(Reason.ACTIVE_NOT_A_NUMBER);
        write(dir.resolve("active"), "-1");
        fails(Reason.ACTIVE_NOT_A_NUMBER);
        write(dir.resolve("active"), "70000");
        fails(Reason.ID_OUT_OF_RANGE);
        write(dir.resolve("active"), "2\n");
        KeyFileException e = fails(Reason.ACTIVE_KEY_ABSENT);
        assertEquals(dir.resolve("active"), e.path());
        write(dir.resolve("active"), " 1 \n");
        assertEquals(1, KeyRingSource.read(dir).activeKeyId());
    }

    /** The layout kubelet's AtomicWriter produces, and a rotation done the way kubelet does it. */
    @Test
    void kubernetesSecretLayoutAndRotationWithoutDowntime() throws IOException {
        byte[] k1 = random(32, 11);
        byte[] k2 = random(32, 12);
        Path v1 = Files.createDirectory(dir.resolve("..2025_01_01_00_00_00.000000001"));
        write(v1.resolve("1.key"), Base64.getEncoder().encodeToString(k1));
        write(v1.resolve("active"), "1");
        Files.createSymbolicLink(dir.resolve("..data"), v1.getFileName());
        Files.createSymbolicLink(dir.resolve("1.key"), Path.of("..data/1.key"));
        Files.createSymbolicLink(dir.resolve("active"), Path.of("..data/active"));

        KeyRingSource src = new KeyRingSource(dir);
        KeyRing first = src.load();
        assertEquals(1, first.activeKeyId());
        assertArrayEquals(k1, first.key(1).material());
        assertFalse(src.reloadIfChanged());
        assertSame(first, src.current());

        ExcerptSealer sealer = new ExcerptSealer(SealOpenTest.QUEUE, src, CipherMode.AES_128_CTR_POLY1305, CryptoEngine.JCE);
        ExcerptOpener opener = new ExcerptOpener(SealOpenTest.QUEUE, src, CipherMode.AES_128_CTR_POLY1305, CryptoEngine.JCE);
        byte[] before = new byte[72];
        int beforeLen = sealer.sealInPlace(10, before, 0, 40);

        // rotation: new timestamped dir, swap ..data atomically, add the new top-level link
        Path v2 = Files.createDirectory(dir.resolve("..2025_02_01_00_00_00.000000002"));
        write(v2.resolve("1.key"), Base64.getEncoder().encodeToString(k1));
        write(v2.resolve("2.key"), HexFormat.of().formatHex(k2));
        write(v2.resolve("active"), "2\n");
        Files.createSymbolicLink(dir.resolve("..data_tmp"), v2.getFileName());
        Files.move(dir.resolve("..data_tmp"), dir.resolve("..data"), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
        Files.createSymbolicLink(dir.resolve("2.key"), Path.of("..data/2.key"));

        assertTrue(src.reloadIfChanged());
        KeyRing second = src.current();
        assertEquals(2, second.activeKeyId());
        assertArrayEquals(k2, second.key(2).material());
        assertFalse(src.reloadIfChanged());

        byte[] after = new byte[72];
        int afterLen = sealer.sealInPlace(11, after, 0, 40);
        assertEquals(2, Envelope.keyId(after, 0));
        assertEquals(40, opener.openInPlace(11, after, 0, afterLen));
        assertEquals(40, opener.openInPlace(10, before, 0, beforeLen));

        // a broken update is refused and the current ring stays in force
        Path v3 = Files.createDirectory(dir.resolve("..2025_03_01_00_00_00.000000003"));
        write(v3.resolve("1.key"), Base64.getEncoder().encodeToString(k1));
        write(v3.resolve("2.key"), "not a key");
        write(v3.resolve("active"), "2");
        Files.createSymbolicLink(dir.resolve("..data_tmp"), v3.getFileName());
        Files.move(dir.resolve("..data_tmp"), dir.resolve("..data"), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
        assertEquals(Reason.WRONG_LENGTH, assertThrows(KeyFileException.class, src::reloadIfChanged).reason());
        assertSame(second, src.current());
    }

    @Test
    void plainFileRewriteIsNoticed() throws IOException {
        write(dir.resolve("1.key"), random(16, 1));
        write(dir.resolve("active"), "1");
        KeyRingSource src = new KeyRingSource(dir);
        src.load();
        assertFalse(src.reloadIfChanged());
        write(dir.resolve("2.key"), random(16, 2));
        write(dir.resolve("active"), "2");
        assertTrue(src.reloadIfChanged());
        assertEquals(2, src.current().activeKeyId());
    }

    /**
     * The moment of a rotation when kubelet has swapped ..data to the new version but not yet added the new
     * top-level link: reading name by name through the top-level links mixes versions (an 'active' of the new
     * version naming a key only the new version has). Reading through ONE resolution of ..data sees one version.
     */
    @Test
    void aSecretIsReadThroughOneResolutionOfItsDataLink() throws IOException {
        byte[] k1 = random(16, 21);
        byte[] k2 = random(16, 22);
        Path v2 = Files.createDirectory(dir.resolve("..2025_03_01_00_00_00.000000002"));
        write(v2.resolve("1.key"), k1);
        write(v2.resolve("2.key"), k2);
        write(v2.resolve("active"), "2");
        Files.createSymbolicLink(dir.resolve("..data"), v2.getFileName());
        Files.createSymbolicLink(dir.resolve("1.key"), Path.of("..data/1.key"));
        Files.createSymbolicLink(dir.resolve("active"), Path.of("..data/active"));
        // no top-level 2.key link yet
        KeyRing ring = new KeyRingSource(dir).load();
        assertEquals(2, ring.activeKeyId());
        assertArrayEquals(k2, ring.key(2).material());
        assertArrayEquals(k1, ring.key(1).material());
    }

    /**
     * The warning goes through SLF4J (docs/library.md "Logging"), so the application's binding and configuration apply:
     * here slf4j-simple, the test binding, which writes {@code LEVEL logger - message} to System.err. Through
     * System.Logger (before) it went to java.util.logging and never appeared in this form.
     */
    @Test
    void theLooseKeyFileWarningIsLoggedThroughSlf4jNamingTheFile() throws IOException {
        Path key = dir.resolve("1.key");
        write(key, random(16, 31));
        write(dir.resolve("active"), "1");
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Files.getFileAttributeView(dir, java.nio.file.attribute.PosixFileAttributeView.class) != null, "needs a POSIX file system");
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        java.io.PrintStream originalErr = System.err;
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            assertEquals(1, new KeyRingSource(dir).load().activeKeyId());
        } finally {
            System.setErr(originalErr);
        }
        String log = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(log.contains("WARN " + KeyRingSource.class.getName() + " - " + key + ": "), log);
        assertTrue(log.contains("rw-r--r--"), log);
    }

    @Test
    void looseKeyFilePermissionsAreReportedOrRefused() throws IOException {
        Path key = dir.resolve("1.key");
        write(key, random(16, 31));
        write(dir.resolve("active"), "1");
        java.nio.file.attribute.PosixFileAttributeView view =
                Files.getFileAttributeView(dir, java.nio.file.attribute.PosixFileAttributeView.class);
        org.junit.jupiter.api.Assumptions.assumeTrue(view != null, "needs a POSIX file system");
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("r--------"));
        assertEquals(1, new KeyRingSource(dir, KeyRingSource.PermissionPolicy.REFUSE).load().activeKeyId());

        Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        assertEquals(1, new KeyRingSource(dir).load().activeKeyId(), "the default policy warns and loads");
        KeyFileException e = assertThrows(KeyFileException.class,
                () -> new KeyRingSource(dir, KeyRingSource.PermissionPolicy.REFUSE).load());
        assertEquals(Reason.INSECURE_PERMISSIONS, e.reason());
        assertEquals(key, e.path());
        assertTrue(e.getMessage().contains("rw-r--r--") && e.getMessage().contains("0400"), e.getMessage());

        Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("r--------"));
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        KeyFileException folder = assertThrows(KeyFileException.class,
                () -> new KeyRingSource(dir, KeyRingSource.PermissionPolicy.REFUSE).load());
        assertEquals(Reason.INSECURE_PERMISSIONS, folder.reason());
        assertEquals(dir, folder.path());
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    }
    /**
     * A Secret volume with the pod's fsGroup: the kubelet writes defaultMode 0400 as 0440 root:&lt;fsGroup&gt;. Accepted
     * there when the group is the process's own; refused on a plain file, with a foreign group, with group write or
     * with any access for others.
     */
    @Test
    void aSecretVolumesFsGroupProjectionIsAcceptedAndNothingLooser() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/self/status")), "needs Linux");
        Path secret = Files.createDirectory(dir.resolve("secret"));
        Path version = Files.createDirectory(secret.resolve("..2026_11_22_00_00_00.000000001"));
        Path key = version.resolve("1.key");
        write(key, random(16, 41));
        write(version.resolve("active"), "1");
        Files.createSymbolicLink(secret.resolve("..data"), version.getFileName());
        Files.createSymbolicLink(secret.resolve("1.key"), Path.of("..data/1.key"));
        Files.createSymbolicLink(secret.resolve("active"), Path.of("..data/active"));
        KeyRingSource refusing = new KeyRingSource(secret, KeyRingSource.PermissionPolicy.REFUSE);

        // the file's group is this process's own group (it created the file): the kubelet's fsGroup projection
        Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("r--r-----"));
        assertEquals(1, refusing.load().activeKeyId());

        for (String looser : List.of("r--r--r--", "r--rw----", "r--r---w-")) {
            Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString(looser));
            KeyFileException e = assertThrows(KeyFileException.class, refusing::load, looser);
            assertEquals(Reason.INSECURE_PERMISSIONS, e.reason(), looser);
        }

        // the same 0440 outside a Secret volume: a group of people, not a pod
        Path plain = Files.createDirectory(dir.resolve("plain"));
        Path plainKey = plain.resolve("1.key");
        write(plainKey, random(16, 42));
        write(plain.resolve("active"), "1");
        Files.setPosixFilePermissions(plainKey, java.nio.file.attribute.PosixFilePermissions.fromString("r--r-----"));
        KeyFileException plainRefused = assertThrows(KeyFileException.class,
                () -> new KeyRingSource(plain, KeyRingSource.PermissionPolicy.REFUSE).load());
        assertEquals(Reason.INSECURE_PERMISSIONS, plainRefused.reason());
        assertTrue(plainRefused.getMessage().contains("r--r-----"), plainRefused.getMessage());

        // 0440 in a Secret volume whose group this process is not in: others can read it
        Files.setPosixFilePermissions(key, java.nio.file.attribute.PosixFilePermissions.fromString("r--r-----"));
        int foreignGroup = 54_321;
        try {
            Files.setAttribute(key, "unix:gid", foreignGroup);
        } catch (IOException notRoot) {
            org.junit.jupiter.api.Assumptions.abort("changing a file's group to another needs root: " + notRoot);
        }
        KeyFileException foreign = assertThrows(KeyFileException.class, refusing::load);
        assertEquals(Reason.INSECURE_PERMISSIONS, foreign.reason());
    }
}
