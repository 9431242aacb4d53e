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

@org.junit.jupiter.api.Tag("unit")
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

    /** A key file in the one format: hex and a line end. */
    static void writeKey(Path p, byte[] key) throws IOException {
        write(p, HexFormat.of().formatHex(key) + "\n");
    }

    /** Kubelet's links over the version folder {@code version} of {@code secret}: ..data, then 1.key and active through it. */
    static void linkSecret(Path secret, Path version) throws IOException {
        Files.createSymbolicLink(secret.resolve("..data"), version.getFileName());
        Files.createSymbolicLink(secret.resolve("1.key"), Path.of("..data/1.key"));
        Files.createSymbolicLink(secret.resolve("active"), Path.of("..data/active"));
    }

    static void write(Path p, String s) throws IOException {
        Files.writeString(p, s, StandardCharsets.US_ASCII);
    }

    private KeyFileException fails(Reason reason) {
        KeyFileException e = assertThrows(KeyFileException.class, () -> KeyRingSource.read(dir));
        assertEquals(reason, e.reason(), e.getMessage());
        return e;
    }

    /** The one key file format: 32 or 64 hex digits, either case, optionally followed by one line end. */
    @Test
    void hexWithAtMostOneLineEndIsTheFormat() throws IOException {
        byte[] k1 = random(16, 1);
        byte[] k2 = random(32, 2);
        byte[] k3 = random(16, 3);
        byte[] k4 = random(32, 4);
        write(dir.resolve("1.key"), HexFormat.of().formatHex(k1));
        write(dir.resolve("2.key"), HexFormat.of().formatHex(k2) + "\n");
        write(dir.resolve("3.key"), HexFormat.of().withUpperCase().formatHex(k3) + "\r\n");
        writeKey(dir.resolve("4.key"), k4);
        write(dir.resolve("active"), "4\n");
        write(dir.resolve("README"), "ignored");
        write(dir.resolve(".hidden.key"), "ignored: dotfile");
        KeyRing ring = KeyRingSource.read(dir);
        assertEquals(4, ring.activeKeyId());
        assertArrayEquals(new int[] {1, 2, 3, 4}, ring.keyIds());
        assertArrayEquals(k1, ring.key(1).material());
        assertArrayEquals(k2, ring.key(2).material());
        assertArrayEquals(k3, ring.key(3).material());
        assertArrayEquals(k4, ring.key(4).material());
        assertEquals(32, ring.key(4).length());
    }

    /**
     * Issue 19: a 32-character file that is not hex was taken as a raw 32-byte key (a passphrase typed into a Secret
     * became a low-entropy key without a word). Raw bytes, base64, surrounding whitespace and non-hex text are all
     * refused, naming the file and the format, never its content.
     */
    @Test
    void anythingButTheOneFormatIsRefused() throws IOException {
        write(dir.resolve("active"), "1");
        Path key = dir.resolve("1.key");
        String passphrase = "correct horse battery staple 123"; // 32 characters, not hex
        assertEquals(32, passphrase.length());
        String hex = HexFormat.of().formatHex(random(16, 7));
        java.util.Map<String, byte[]> refused = new java.util.LinkedHashMap<>();
        refused.put("32-character passphrase", passphrase.getBytes(StandardCharsets.US_ASCII));
        refused.put("16 raw bytes", random(16, 5));
        refused.put("32 raw bytes", random(32, 6));
        refused.put("base64 of 16 bytes", Base64.getEncoder().encode(random(16, 8)));
        refused.put("base64 of 32 bytes", (Base64.getEncoder().encodeToString(random(32, 9)) + "\n").getBytes(StandardCharsets.US_ASCII));
        refused.put("hex with leading space", (" " + hex).getBytes(StandardCharsets.US_ASCII));
        refused.put("hex with two line ends", (hex + "\n\n").getBytes(StandardCharsets.US_ASCII));
        refused.put("hex with a trailing tab", (hex + "\t").getBytes(StandardCharsets.US_ASCII));
        refused.put("0x-prefixed hex", ("0x" + hex.substring(2)).getBytes(StandardCharsets.US_ASCII));
        for (java.util.Map.Entry<String, byte[]> bad : refused.entrySet()) {
            write(key, bad.getValue());
            KeyFileException e = assertThrows(KeyFileException.class, () -> KeyRingSource.read(dir), bad.getKey());
            assertTrue(e.reason() == Reason.WRONG_LENGTH || e.reason() == Reason.NOT_HEX, bad.getKey() + ": " + e.reason());
            assertEquals(key, e.path());
            assertTrue(e.getMessage().contains("32 or 64 hex digits"), e.getMessage());
            assertFalse(e.getMessage().contains("horse"), e.getMessage());
        }
        write(key, passphrase);
        assertEquals(Reason.NOT_HEX, assertThrows(KeyFileException.class, () -> KeyRingSource.read(dir)).reason());
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
        for (String content : new String[] {"abcdefabcdefabcdefabcdef01234", // 29 hex digits
                "0123456789abcdef0123456789abcdef0", // 33
                "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4\n"}) {
            write(dir.resolve("1.key"), content + "\n");
            KeyFileException e = fails(Reason.WRONG_LENGTH);
            // one line end is part of the format; what comes before it is counted
            assertTrue(e.getMessage().contains("holds " + content.length() + " characters"), e.getMessage());
            assertTrue(e.getMessage().contains("32 or 64 hex digits"), e.getMessage());
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
        writeKey(dir.resolve("1.key"), random(16, 1));
        writeKey(dir.resolve("65536.key"), random(16, 1));
        fails(Reason.ID_OUT_OF_RANGE);
        Files.delete(dir.resolve("65536.key"));
        writeKey(dir.resolve("one.key"), random(16, 1));
        fails(Reason.BAD_FILE_NAME);
        Files.delete(dir.resolve("one.key"));
        writeKey(dir.resolve("01.key"), random(16, 2));
        fails(Reason.DUPLICATE_KEY_ID);
        Files.delete(dir.resolve("01.key"));
        writeKey(dir.resolve("65535.key"), random(16, 1));
        assertEquals(2, KeyRingSource.read(dir).size());
    }

    @Test
    void activeFileProblems() throws IOException {
        writeKey(dir.resolve("1.key"), random(16, 1));
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
        write(v1.resolve("1.key"), HexFormat.of().formatHex(k1));
        write(v1.resolve("active"), "1");
        linkSecret(dir, v1);

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
        write(v2.resolve("1.key"), HexFormat.of().formatHex(k1));
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
        write(v3.resolve("1.key"), HexFormat.of().formatHex(k1));
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
        writeKey(dir.resolve("1.key"), random(16, 1));
        write(dir.resolve("active"), "1");
        KeyRingSource src = new KeyRingSource(dir);
        src.load();
        assertFalse(src.reloadIfChanged());
        writeKey(dir.resolve("2.key"), random(16, 2));
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
        writeKey(v2.resolve("1.key"), k1);
        writeKey(v2.resolve("2.key"), k2);
        write(v2.resolve("active"), "2");
        linkSecret(dir, v2);
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
        writeKey(key, random(16, 31));
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
        writeKey(key, random(16, 31));
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
        writeKey(key, random(16, 41));
        write(version.resolve("active"), "1");
        linkSecret(secret, version);
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
        writeKey(plainKey, random(16, 42));
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
    private static void chmod(Path p, String perms) throws IOException {
        Files.setPosixFilePermissions(p, java.nio.file.attribute.PosixFilePermissions.fromString(perms));
    }

    private static KeyFileException refused(Path keyDir, KeyRingSource.PermissionPolicy policy, Path expectedPath) {
        KeyFileException e = assertThrows(KeyFileException.class, () -> new KeyRingSource(keyDir, policy).load(),
                "refused under " + policy + ": " + expectedPath);
        assertEquals(Reason.INSECURE_PERMISSIONS, e.reason(), e.getMessage());
        assertEquals(expectedPath, e.path(), e.getMessage());
        return e;
    }

    /**
     * Issue 19: the checks missed a 0622 key file, a 0666 active file and a 0770 key folder, even under REFUSE. Now:
     * anything others can write is refused under every policy; any other access for group or others to a key file,
     * and group write on the active file or a folder, is refused under REFUSE (and a warning otherwise).
     */
    @Test
    void everyLoosePermissionOnKeyFilesTheActiveFileAndFoldersIsCaught() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Files.getFileAttributeView(dir, java.nio.file.attribute.PosixFileAttributeView.class) != null, "needs a POSIX file system");
        Path keyDir = Files.createDirectory(dir.resolve("keys"));
        Path key = keyDir.resolve("1.key");
        Path active = keyDir.resolve("active");
        writeKey(key, random(16, 51));
        write(active, "1");
        chmod(keyDir, "rwx------");
        chmod(key, "r--------");
        chmod(active, "r--------");
        assertEquals(1, new KeyRingSource(keyDir, KeyRingSource.PermissionPolicy.REFUSE).load().activeKeyId(), "control");

        for (String loose : List.of("rw--w--w-", "rw--w----", "r----x---", "r-------x")) { // 0622 among them
            chmod(key, loose);
            refused(keyDir, KeyRingSource.PermissionPolicy.REFUSE, key);
        }
        chmod(key, "rw-----w-");
        refused(keyDir, KeyRingSource.PermissionPolicy.WARN, key);
        chmod(key, "r--------");

        chmod(active, "rw-rw-rw-"); // 0666
        refused(keyDir, KeyRingSource.PermissionPolicy.WARN, active);
        chmod(active, "rw-rw----");
        refused(keyDir, KeyRingSource.PermissionPolicy.REFUSE, active);
        chmod(active, "r--r--r--");
        assertEquals(1, new KeyRingSource(keyDir, KeyRingSource.PermissionPolicy.REFUSE).load().activeKeyId(),
                "an active file others can read names a key id, no secret");
        chmod(active, "r--------");

        chmod(keyDir, "rwxrwx---"); // 0770
        refused(keyDir, KeyRingSource.PermissionPolicy.REFUSE, keyDir);
        chmod(keyDir, "rwx----wx");
        refused(keyDir, KeyRingSource.PermissionPolicy.WARN, keyDir);
        chmod(keyDir, "rwx------");
    }

    /**
     * Issue 19: a staged 2.key that others could write was swapped before the rotation made it active, and the
     * attacker read every excerpt sealed after it. Refused now whatever the policy, so the rotation does not happen.
     */
    @Test
    void aStagedKeyOthersCanWriteIsRefusedBeforeItCanBeSwapped() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Files.getFileAttributeView(dir, java.nio.file.attribute.PosixFileAttributeView.class) != null, "needs a POSIX file system");
        Path keyDir = Files.createDirectory(dir.resolve("keys"));
        chmod(keyDir, "rwx------");
        writeKey(keyDir.resolve("1.key"), random(16, 61));
        write(keyDir.resolve("active"), "1");
        chmod(keyDir.resolve("1.key"), "r--------");
        KeyRingSource source = new KeyRingSource(keyDir); // the default policy, WARN
        source.load();
        Path staged = keyDir.resolve("2.key");
        writeKey(staged, random(16, 62));
        chmod(staged, "rw-rw-rw-");
        byte[] attackers = random(16, 63);
        writeKey(staged, attackers); // the swap
        write(keyDir.resolve("active"), "2"); // the operator's rotation
        KeyFileException e = assertThrows(KeyFileException.class, source::reloadIfChanged);
        assertEquals(Reason.INSECURE_PERMISSIONS, e.reason());
        assertEquals(staged, e.path());
        assertEquals(1, source.current().activeKeyId(), "new excerpts stay sealed under key 1");
    }

    /**
     * Kubernetes' layout: the names are links (lrwxrwxrwx) whose own mode means nothing; the real files and the version
     * folder are judged, and the volume's sticky tmpfs root is accepted. A name linked into a folder others can write
     * is refused.
     */
    @Test
    void theSecretLayoutIsJudgedByItsRealFilesAndFolders() throws IOException, InterruptedException {
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/self/status")), "needs Linux");
        Path secret = Files.createDirectory(dir.resolve("secret"));
        Path version = Files.createDirectory(secret.resolve("..2026_11_26_00_00_00.000000001"));
        Path key = version.resolve("1.key");
        writeKey(key, random(16, 71));
        write(version.resolve("active"), "1");
        linkSecret(secret, version);
        chmod(key, "r--------");
        chmod(version.resolve("active"), "r--------");
        chmod(version, "r-xr-xr-x");
        Process sticky = new ProcessBuilder("chmod", "1777", secret.toString()).inheritIO().start();
        assertEquals(0, sticky.waitFor());
        KeyRingSource refusing = new KeyRingSource(secret, KeyRingSource.PermissionPolicy.REFUSE);
        assertEquals(1, refusing.load().activeKeyId(), "kubelet's tmpfs root 1777 and links lrwxrwxrwx are fine");

        chmod(secret, "rwxrwxrwx"); // the same root without the sticky bit: the ..data link could be replaced
        refused(secret, KeyRingSource.PermissionPolicy.WARN, secret);
        chmod(secret, "rwx------");
        chmod(version, "rwxrwxrwx");
        refused(secret, KeyRingSource.PermissionPolicy.WARN, version);
        chmod(version, "r-x------");
        chmod(key, "rw-rw-rw-");
        refused(secret, KeyRingSource.PermissionPolicy.WARN, key); // read through ..data: the real file is named
        chmod(key, "r--------");

        // Outside a Secret volume, a key linked from a folder others can write into (it could be replaced there).
        Path plain = Files.createDirectory(dir.resolve("plain"));
        Path elsewhere = Files.createDirectory(dir.resolve("elsewhere"));
        writeKey(elsewhere.resolve("1.key"), random(16, 72));
        chmod(elsewhere.resolve("1.key"), "r--------");
        write(plain.resolve("active"), "1");
        chmod(plain, "rwx------");
        Files.createSymbolicLink(plain.resolve("1.key"), elsewhere.resolve("1.key"));
        chmod(elsewhere, "rwx------");
        assertEquals(1, new KeyRingSource(plain, KeyRingSource.PermissionPolicy.REFUSE).load().activeKeyId(), "control");
        chmod(elsewhere, "rwxrwxrwx");
        refused(plain, KeyRingSource.PermissionPolicy.WARN, elsewhere.toRealPath());
        chmod(elsewhere, "rwx------");
    }
}
