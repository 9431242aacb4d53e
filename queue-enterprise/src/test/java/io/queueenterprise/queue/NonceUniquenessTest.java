package io.queueenterprise.queue;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.EnvelopeException;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.wire.DocumentContext;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.generators.HKDFBytesGenerator;
import org.bouncycastle.crypto.macs.Poly1305;
import org.bouncycastle.crypto.params.HKDFParameters;
import org.bouncycastle.crypto.params.KeyParameter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 19, section 1: no (key, nonce) pair repeats, whatever happens to the files of a queue. Each scenario writes
 * {@value #PER_SESSION} excerpts per writer session, counts repeated (key id, epoch, sequence) over everything every
 * session wrote (0), then attempts the forgery a repeat allows: the one-time Poly1305 key of one session's nonce
 * (what an attacker solves from two tags under one repeated nonce; computed here from the key) used to forge an edit
 * of the other session's excerpt at the same sequence. The library's tailer must refuse it. Until issue 19 a promoted
 * queue numbered its appenders' epochs from the term recorded in its role file, and scenarios (a)-(c) repeated
 * every nonce.
 */
@Tag("unit")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class NonceUniquenessTest {
    static final int PER_SESSION = 10_000;
    static final CipherMode MODE = CipherMode.AES_128_CTR_POLY1305;

    @TempDir
    Path dir;

    private final byte[] material = TestKeys.randomMaterial();
    private final KeyRing ring = KeyRing.single(MasterKey.of(1, material));
    /** The keys the forgery's victim is read with. */
    private KeyRing readerRing = ring;

    /** (a) Promoted under term 5, the role file edited back to "replica", promoted under term 5 again. */
    @Test
    void aTermReusedAfterTheRoleFileWasEditedBackRepeatsNoNonce() throws IOException {
        Path replica = newReplica("replica");
        Path roleFile = replica.resolve(QueueRole.FILE_NAME);
        byte[] before = Files.readAllBytes(roleFile);
        List<Sealed> first = promoteAndWrite(replica, 5, "first");
        Files.write(roleFile, before);
        List<Sealed> second = promoteAndWrite(replica, 5, "second");
        assertNoRepeatAndNoForgery(replica, first, second);
    }

    /** (b) A volume snapshot taken before the promotion, restored after it; promoted under the same term again. */
    @Test
    void aTermReusedAfterAVolumeSnapshotWasRestoredRepeatsNoNonce() throws IOException {
        Path replica = newReplica("replica");
        Path snapshot = copy(replica, dir.resolve("snapshot"));
        List<Sealed> first = promoteAndWrite(replica, 5, "first"); // replicated or seen by the attacker meanwhile
        deleteRecursively(replica);
        copy(snapshot, replica);
        List<Sealed> second = promoteAndWrite(replica, 5, "second");
        assertNoRepeatAndNoForgery(replica, first, second);
    }

    /** (c) Two replicas of one queue (same incarnation, same keys), each promoted under term 5. */
    @Test
    void twoReplicasPromotedUnderOneTermRepeatNoNonce() throws IOException {
        Path one = newReplica("replica-1");
        Path two = newReplica("replica-2");
        List<Sealed> first = promoteAndWrite(one, 5, "first");
        List<Sealed> second = promoteAndWrite(two, 5, "second");
        assertNoRepeatAndNoForgery(two, first, second);
    }

    /** A copied directory written again, beside the original: both continue the same queue incarnation. */
    @Test
    void aCopiedDirectoryWrittenAgainRepeatsNoNonce() throws IOException {
        Path original = dir.resolve("original");
        write(EnterpriseQueue.builder(original).name("orders").encrypted(ring), "before");
        Path copy = copy(original, dir.resolve("copy"));
        List<Sealed> first = write(EnterpriseQueue.builder(original).encrypted(ring), "first");
        List<Sealed> second = write(EnterpriseQueue.builder(copy).encrypted(ring), "second");
        assertNoRepeatAndNoForgery(copy, first, second);
    }

    /** Two writers on one queue at once: a promoted leader and a second opening of its directory. */
    @Test
    void twoWritersOnOneQueueRepeatNoNonce() throws IOException {
        Path replica = newReplica("replica");
        List<Sealed> first;
        List<Sealed> second;
        try (EnterpriseQueue promoted = EnterpriseQueue.builder(replica).encrypted(ring).build()) {
            promoted.promote(5);
            try (EnterpriseQueue other = EnterpriseQueue.builder(replica).encrypted(ring).build(); // a second process
                 QueueAppender a = promoted.createAppender(); QueueAppender b = other.createAppender()) {
                for (int i = 0; i < PER_SESSION; i++) {
                    a.write(message("first", i));
                    b.write(message("second", i));
                }
            }
            List<Sealed> written = after(promoted, -1);
            first = new ArrayList<>();
            second = new ArrayList<>();
            for (int i = 0; i < written.size(); i++) {
                (i % 2 == 0 ? first : second).add(written.get(i)); // they took turns
            }
        }
        assertNoRepeatAndNoForgery(replica, first, second);
    }

    /** Key rotation 1 -> 2 -> 1 through the key directory, a writer session under each. */
    @Test
    void keyRotationBackAndForthRepeatsNoNonce() throws IOException {
        Path keys = dir.resolve("keys");
        byte[] key2 = TestKeys.randomMaterial();
        TestKeys.writeKeyFile(keys, 1, material);
        Path queueDir = dir.resolve("rotating");
        List<Sealed> all = new ArrayList<>();
        List<Sealed> firstUnderKey1 = write(EnterpriseQueue.builder(queueDir).name("orders").encrypted(keys), "k1");
        all.addAll(firstUnderKey1);
        TestKeys.writeKeyFile(keys, 2, key2);
        all.addAll(write(EnterpriseQueue.builder(queueDir).encrypted(keys), "k2"));
        Files.writeString(keys.resolve("active"), "1");
        List<Sealed> againUnderKey1 = write(EnterpriseQueue.builder(queueDir).encrypted(keys), "k1-again");
        assertEquals(1, Envelope.keyId(againUnderKey1.get(0).envelope, 0));
        all.addAll(againUnderKey1);
        assertEquals(0, repeats(all));
        assertEquals(3 * PER_SESSION, all.size());
        readerRing = KeyRing.of(1, MasterKey.of(1, material), MasterKey.of(2, key2));
        try (EnterpriseQueue q = EnterpriseQueue.builder(queueDir).encrypted(keys).readOnly(true).build()) {
            attemptForgery(queueDir, q, firstUnderKey1, againUnderKey1, "k1-again");
        }
    }

    // ------------------------------------------------------------------ the scenarios' parts

    private Path newReplica(String name) {
        Path leader = dir.resolve("leader");
        QueueDescriptor descriptor;
        try (EnterpriseQueue q = EnterpriseQueue.builder(leader).name("orders").encrypted(ring).build()) {
            descriptor = q.descriptor();
        }
        Path replica = dir.resolve(name);
        try (EnterpriseQueue q = EnterpriseQueue.builder(replica).replicaOf(descriptor).encrypted(ring).build()) {
            assertTrue(q.isReplica());
        }
        return replica;
    }

    private List<Sealed> promoteAndWrite(Path queueDir, long term, String session) {
        try (EnterpriseQueue q = EnterpriseQueue.builder(queueDir).encrypted(ring).build()) {
            q.promote(term); // refused only if the directory records a term >= 5: the edits and restores make it succeed
            return writeAll(q, session);
        }
    }

    private List<Sealed> write(EnterpriseQueue.Builder builder, String session) {
        try (EnterpriseQueue q = builder.build()) {
            return writeAll(q, session);
        }
    }

    private static List<Sealed> writeAll(EnterpriseQueue q, String session) {
        long before = q.lastIndex();
        try (QueueAppender appender = q.createAppender()) {
            for (int i = 0; i < PER_SESSION; i++) {
                appender.write(message(session, i));
            }
        }
        return after(q, before);
    }

    private static byte[] message(String session, int i) {
        return (session + " pays " + i + " to alice").getBytes(StandardCharsets.UTF_8);
    }

    /** The envelopes after index {@code before}, as stored (what anyone who can read the files sees). */
    private static List<Sealed> after(EnterpriseQueue q, long before) {
        List<Sealed> out = new ArrayList<>();
        try (ExcerptTailer raw = q.chronicleQueue().createTailer()) {
            while (true) {
                try (DocumentContext dc = raw.readingDocument()) {
                    if (!dc.isPresent()) {
                        return out;
                    }
                    if (dc.index() > before) {
                        out.add(new Sealed(dc.index(), dc.wire().bytes().toByteArray()));
                    }
                }
            }
        }
    }

    private void assertNoRepeatAndNoForgery(Path target, List<Sealed> first, List<Sealed> second) {
        String secondName = "second";
        assertEquals(PER_SESSION, first.size());
        assertEquals(PER_SESSION, second.size());
        List<Sealed> all = new ArrayList<>(first);
        all.addAll(second);
        assertEquals(0, repeats(all), "repeated (key id, epoch, sequence) over both sessions");
        try (EnterpriseQueue q = EnterpriseQueue.builder(target).encrypted(ring).readOnly(true).build()) {
            attemptForgery(target, q, first, second, secondName);
        }
    }

    /** Envelopes whose (key id, epoch, sequence) an earlier one already used. */
    static int repeats(List<Sealed> sealed) {
        Set<List<Long>> seen = new HashSet<>();
        int repeated = 0;
        for (Sealed s : sealed) {
            List<Long> nonce = List.of((long) Envelope.keyId(s.envelope, 0), Envelope.epoch(s.envelope, 0),
                    (long) Envelope.sequence(s.envelope, 0));
            if (!seen.add(nonce)) {
                repeated++;
            }
        }
        return repeated;
    }

    /**
     * The attack a repeat allows: take the one-time key (r, s) of a nonce of session {@code first}, and with it forge
     * an edit of {@code second}'s excerpt at the same sequence, in the cycle file of {@code queueDir}. Refused unless
     * the two share the nonce. Control: the same forgery against the excerpt the key belongs to is accepted, so the
     * forgery is built right and the refusal means something.
     */
    private void attemptForgery(Path queueDir, EnterpriseQueue q, List<Sealed> first, List<Sealed> second,
                                String secondName) {
        int at = 17;
        Sealed victim = second.get(at);
        Sealed leaked = first.get(at);
        assertEquals(Envelope.sequence(leaked.envelope, 0), Envelope.sequence(victim.envelope, 0), "same writer sequence");
        byte[] oneTimeKey = oneTimeKey(q.descriptor(), Envelope.keyId(leaked.envelope, 0),
                Envelope.epoch(leaked.envelope, 0), Envelope.sequence(leaked.envelope, 0));
        byte[] forged = forgeEdit(victim, oneTimeKey);
        overwrite(queueDir, victim.envelope, forged);
        try (EnterpriseQueue reader = EnterpriseQueue.builder(queueDir).encrypted(readerRing).readOnly(true).build();
             QueueTailer tailer = reader.createTailer()) {
            assertTrue(tailer.moveToIndex(victim.index));
            ExcerptDecryptionException refused = assertThrows(ExcerptDecryptionException.class,
                    () -> tailer.read(new byte[256]), "the forgery was accepted: the two sessions shared a nonce");
            assertEquals(EnvelopeException.Reason.AUTHENTICATION_FAILED, refused.reason());
        }
        // Control, on the victim itself: with ITS one-time key the same forgery is accepted.
        byte[] ownKey = oneTimeKey(q.descriptor(), Envelope.keyId(victim.envelope, 0),
                Envelope.epoch(victim.envelope, 0), Envelope.sequence(victim.envelope, 0));
        byte[] control = forgeEdit(victim, ownKey);
        overwrite(queueDir, forged, control);
        try (EnterpriseQueue reader = EnterpriseQueue.builder(queueDir).encrypted(readerRing).readOnly(true).build();
             QueueTailer tailer = reader.createTailer()) {
            assertTrue(tailer.moveToIndex(victim.index));
            byte[] buffer = new byte[256];
            int n = tailer.read(buffer);
            byte[] expected = message(secondName, at);
            expected[0] ^= 0x01;
            assertArrayEquals(expected, Arrays.copyOf(buffer, n), "control: the forgery is built right");
        }
        overwrite(queueDir, control, victim.envelope);
    }

    /** Flips the first plaintext bit and computes a new tag with {@code oneTimeKey} = r || s. */
    private static byte[] forgeEdit(Sealed victim, byte[] oneTimeKey) {
        byte[] env = victim.envelope.clone();
        int ctLen = env.length - MODE.overhead();
        env[Envelope.HEADER_LENGTH] ^= 0x01;
        Poly1305 mac = new Poly1305();
        mac.init(new KeyParameter(oneTimeKey));
        mac.update(env, Envelope.HEADER_LENGTH, ctLen);
        mac.update(new byte[(16 - ctLen % 16) % 16], 0, (16 - ctLen % 16) % 16);
        ByteBuffer last = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        last.putLong(victim.index); // index bound: every local appender's excerpt
        long header = ByteBuffer.wrap(env, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt() & 0xFFFF_FFFFL;
        last.putLong(ctLen | header << 32);
        mac.update(last.array(), 0, 16);
        mac.doFinal(env, Envelope.HEADER_LENGTH + ctLen);
        return env;
    }

    /** AES_k(block(0)) || AES_k(block(1)) for the nonce, k derived as docs/crypto.md says (HKDF-SHA256). */
    private byte[] oneTimeKey(QueueDescriptor d, int keyId, long epoch, int sequence) {
        assertEquals(1, keyId, "the scenarios' forgery uses key 1");
        try {
            HKDFBytesGenerator hkdf = new HKDFBytesGenerator(new SHA256Digest());
            hkdf.init(new HKDFParameters(material, d.incarnationId(),
                    ("queue-enterprise/v2/" + MODE.name() + "/aes-128/" + d.name()).getBytes(StandardCharsets.UTF_8)));
            byte[] aesKey = new byte[16];
            hkdf.generateBytes(aesKey, 0, 16);
            Cipher aes = Cipher.getInstance("AES/ECB/NoPadding");
            aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(aesKey, "AES"));
            ByteBuffer blocks = ByteBuffer.allocate(32);
            for (int c = 0; c < 2; c++) {
                blocks.putLong(epoch).putInt(sequence).putInt(c);
            }
            return aes.doFinal(blocks.array());
        } catch (java.security.GeneralSecurityException e) {
            throw new AssertionError(e);
        }
    }

    /** Replaces one envelope's bytes in the queue's cycle file (same length), as an attacker with the files does. */
    private static void overwrite(Path queueDir, byte[] was, byte[] now) {
        try (Stream<Path> files = Files.list(queueDir)) {
            for (Path cycle : files.filter(p -> p.toString().endsWith(".cq4")).toList()) {
                byte[] content = Files.readAllBytes(cycle);
                int at = ByteSearch.indexOf(content, was);
                if (at >= 0) {
                    try (RandomAccessFile f = new RandomAccessFile(cycle.toFile(), "rw")) {
                        f.seek(at);
                        f.write(now);
                    }
                    return;
                }
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("envelope not found in " + queueDir);
    }

    private static Path copy(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path p : paths.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
        return to;
    }

    private static void deleteRecursively(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    record Sealed(long index, byte[] envelope) {
    }
}
