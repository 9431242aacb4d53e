package io.queueenterprise.bench.jmh;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.crypto.CryptoEngine;
import io.queueenterprise.crypto.Envelope;
import io.queueenterprise.crypto.ExcerptOpener;
import io.queueenterprise.crypto.ExcerptSealer;
import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.crypto.QueueIdentity;
import io.queueenterprise.crypto.WriteKeys;
import io.queueenterprise.protocol.client.WriteTag;
import java.security.GeneralSecurityException;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of sealing/opening one excerpt as the queue library does it: {@link #seal} encrypts from the
 * caller's array into the staging envelope and binds the index (the appender's two phases back to back);
 * {@link #open} verifies a private copy of the envelope and decrypts it into the caller's array, walking
 * through a run of envelopes sealed in order (as a tailer does) so that the keystream batches see their real
 * hit pattern. The staging copy alone is {@link #copyOnly}. References: JCE AES-GCM re-initialised per message (what a naive design pays) and
 * a never-re-initialised JCE AES-CTR stream (a lower bound for "AES-NI over the bytes").
 *
 * <p>Run: {@code java -cp ... org.openjdk.jmh.Main CryptoBenchmark}; see docs/crypto.md for the numbers.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CryptoBenchmark {

    /** Seal/open state: one sealer and one opener of the given mode and engine. */
    @State(Scope.Thread)
    public static class Sealing {
        @Param({"AES_128_CTR", "AES_128_CTR_POLY1305"})
        public CipherMode mode;
        @Param({"JCE", "BOUNCY_CASTLE"})
        public CryptoEngine engine;
        @Param({"40", "256", "4096"})
        public int size;

        static final int RUN = 1024;
        static final long FIRST_INDEX = (20_000L << 32) | 7;

        ExcerptSealer sealer;
        ExcerptOpener opener;
        byte[] plaintext;
        byte[][] sealed;
        int sealedLength;
        byte[] staging;
        byte[] out;
        long index;
        int next;
        /** The write tag a remote APPEND carries over its sealed envelope (remote path only; docs/crypto.md). */
        WriteTag writeTag;
        byte[] tag = new byte[WriteTag.LENGTH];

        @Setup
        public void setup() {
            SplittableRandom rnd = new SplittableRandom(1);
            byte[] key = new byte[32];
            for (int i = 0; i < key.length; i++) {
                key[i] = (byte) rnd.nextInt();
            }
            KeyRing ring = KeyRing.single(MasterKey.of(1, key));
            QueueIdentity queue = QueueIdentity.createNew("bench");
            sealer = new ExcerptSealer(queue, ring, mode, engine);
            opener = new ExcerptOpener(queue, ring, mode, engine);
            writeTag = new WriteTag(WriteKeys.derive(ring.key(1), "bench"));
            plaintext = new byte[size];
            for (int i = 0; i < size; i++) {
                plaintext[i] = (byte) rnd.nextInt();
            }
            staging = new byte[Envelope.sealedLength(mode, size)];
            out = new byte[size];
            sealed = new byte[RUN][];
            ExcerptSealer writer = new ExcerptSealer(queue, ring, mode, engine);
            for (int i = 0; i < RUN; i++) {
                sealed[i] = new byte[staging.length];
                System.arraycopy(plaintext, 0, sealed[i], Envelope.PAYLOAD_OFFSET, size);
                sealedLength = writer.sealInPlace(FIRST_INDEX + i, sealed[i], 0, size);
            }
            index = 1L << 32;
        }
    }

    /** Reference ciphers: only the size parameter. */
    @State(Scope.Thread)
    public static class Reference {
        @Param({"40", "256", "4096"})
        public int size;

        byte[] plaintext;
        byte[] out;
        Cipher gcm;
        SecretKeySpec key;
        byte[] iv = new byte[12];
        long counter;
        Cipher ctr;
        org.bouncycastle.crypto.macs.Poly1305 bcPoly1305;

        @Setup
        public void setup() throws GeneralSecurityException {
            SplittableRandom rnd = new SplittableRandom(2);
            byte[] k = new byte[16];
            for (int i = 0; i < k.length; i++) {
                k[i] = (byte) rnd.nextInt();
            }
            key = new SecretKeySpec(k, "AES");
            plaintext = new byte[size];
            out = new byte[size + 16];
            gcm = Cipher.getInstance("AES/GCM/NoPadding");
            ctr = Cipher.getInstance("AES/CTR/NoPadding");
            ctr.init(Cipher.ENCRYPT_MODE, key, new IvParameterSpec(new byte[16]));
            byte[] polyKey = new byte[32];
            for (int i = 0; i < 16; i++) {
                polyKey[i] = (byte) rnd.nextInt();
            }
            bcPoly1305 = new org.bouncycastle.crypto.macs.Poly1305();
            bcPoly1305.init(new org.bouncycastle.crypto.params.KeyParameter(polyKey));
        }
    }

    /** The remote APPEND's write tag over one sealed envelope: read beside {@link #seal} of the same run (a ratio). */
    @Benchmark
    public byte[] writeTag(Sealing s) {
        s.writeTag.sign(s.sealed[0], 0, s.sealedLength, s.tag, 0);
        return s.tag;
    }

    @Benchmark
    public int seal(Sealing s) {
        int length = s.sealer.beginSeal(s.plaintext, 0, s.size, s.staging, 0);
        s.sealer.completeSeal(s.index++);
        return length;
    }

    @Benchmark
    public int open(Sealing s) {
        int i = s.next;
        s.next = (i + 1) & (Sealing.RUN - 1);
        System.arraycopy(s.sealed[i], 0, s.staging, 0, s.sealedLength);
        int length = s.opener.verify(Sealing.FIRST_INDEX + i, s.staging, 0, s.sealedLength);
        s.opener.decryptTo(s.out, 0);
        return length;
    }

    /** JCE AES-GCM as usually written: init with a fresh GCMParameterSpec per message, then doFinal. */
    @Benchmark
    public int gcmReinitPerMessage(Reference r) throws GeneralSecurityException {
        long c = ++r.counter;
        for (int i = 0; i < 8; i++) {
            r.iv[4 + i] = (byte) (c >>> (8 * i));
        }
        r.gcm.init(Cipher.ENCRYPT_MODE, r.key, new GCMParameterSpec(128, r.iv));
        return r.gcm.doFinal(r.plaintext, 0, r.size, r.out, 0);
    }

    /** A JCE AES-CTR stream initialised once and never again: cipher.update over the bytes (no per-message IV). */
    @Benchmark
    public int ctrLongLivedStream(Reference r) throws GeneralSecurityException {
        return r.ctr.update(r.plaintext, 0, r.size, r.out, 0);
    }

    /**
     * Bouncy Castle's Poly1305 over the message, keyed once (no cipher): what the authenticated mode would
     * cost with BC's MAC. Compare with (authenticated seal - CTR seal), our own Poly1305 plus the pad block.
     */
    @Benchmark
    public byte[] bcPoly1305(Reference r) {
        r.bcPoly1305.update(r.plaintext, 0, r.size);
        r.bcPoly1305.doFinal(r.out, 0);
        return r.out;
    }

    /** The staging copy alone (part of every seal/open measurement above). */
    @Benchmark
    public byte[] copyOnly(Reference r) {
        System.arraycopy(r.plaintext, 0, r.out, 0, r.size);
        return r.out;
    }
}
