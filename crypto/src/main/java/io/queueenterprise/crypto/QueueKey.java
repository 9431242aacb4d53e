package io.queueenterprise.crypto;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.generators.HKDFBytesGenerator;
import org.bouncycastle.crypto.params.HKDFParameters;

/**
 * Keys derived for one queue incarnation and one cipher mode from one master key with HKDF-SHA256 (RFC 5869):
 * ikm = master key, salt = incarnation id,
 * info = "queue-enterprise/v2/" + mode + "/" + purpose + "/" + queue name (UTF-8), except the fingerprint,
 * whose info leaves the mode out ("queue-enterprise/v2/fingerprint/" + queue name).
 * The format version, the mode and the queue's identity are all in the derivation, so the same master key
 * gives unrelated keys to another queue, another incarnation, another mode or another format: relabelling any
 * of them (a downgrade to CTR, a descriptor copied from another queue) yields keys that open nothing.
 *
 * <p>Purposes: {@code aes-128} (16-byte AES key), {@code fingerprint} (8 bytes: a key check value recorded in
 * the queue descriptor), {@code descriptor} (32-byte HMAC-SHA256 key authenticating the queue descriptor).
 * Poly1305 keys are not derived here: they are one-time keys made per excerpt from the AES key and the nonce.
 */
public final class QueueKey {
    public static final String INFO_PREFIX = "queue-enterprise/v2/";
    public static final String PURPOSE_AES = "aes-128";
    public static final String PURPOSE_FINGERPRINT = "fingerprint";
    public static final String PURPOSE_DESCRIPTOR = "descriptor";
    public static final int DESCRIPTOR_TAG_LENGTH = 32;

    private final int keyId;
    private final byte[] aesKey;
    private final byte[] descriptorKey;
    private final long fingerprint;

    private QueueKey(int keyId, byte[] aesKey, byte[] descriptorKey, long fingerprint) {
        this.keyId = keyId;
        this.aesKey = aesKey;
        this.descriptorKey = descriptorKey;
        this.fingerprint = fingerprint;
    }

    public static QueueKey derive(MasterKey master, QueueIdentity queue, CipherMode mode) {
        byte[] ikm = master.materialCopy(); // never a half-wiped key (see MasterKey.materialCopy)
        byte[] salt = queue.incarnationIdNoCopy();
        String context = mode.name() + "/";
        byte[] aes;
        byte[] descriptor;
        byte[] fp;
        try {
            aes = hkdf(ikm, salt, context + PURPOSE_AES, queue.name(), 16);
            descriptor = hkdf(ikm, salt, context + PURPOSE_DESCRIPTOR, queue.name(), 32);
            // The key check value leaves the mode out: it answers "is this the right key for this queue?" even when
            // the descriptor's mode was tampered with (which the descriptor's authenticator then reports).
            fp = hkdf(ikm, salt, PURPOSE_FINGERPRINT, queue.name(), 8);
        } finally {
            java.util.Arrays.fill(ikm, (byte) 0);
        }
        long f = 0;
        for (byte b : fp) {
            f = (f << 8) | (b & 0xFF);
        }
        return new QueueKey(master.id(), aes, descriptor, f);
    }

    /** HKDF-SHA256 via Bouncy Castle's {@link HKDFBytesGenerator}. */
    static byte[] hkdf(byte[] ikm, byte[] salt, String purpose, String queueName, int length) {
        byte[] info = (INFO_PREFIX + purpose + "/" + queueName).getBytes(StandardCharsets.UTF_8);
        return hkdf(ikm, salt, info, length);
    }

    static byte[] hkdf(byte[] ikm, byte[] salt, byte[] info, int length) {
        HKDFBytesGenerator gen = new HKDFBytesGenerator(new SHA256Digest());
        gen.init(new HKDFParameters(ikm, salt, info));
        byte[] out = new byte[length];
        gen.generateBytes(out, 0, length);
        return out;
    }

    public int keyId() {
        return keyId;
    }

    /** Key check value: equal fingerprints mean (with probability 1 - 2^-64) the same derived keys. Not secret. */
    public long fingerprint() {
        return fingerprint;
    }

    /** HMAC-SHA256 of {@code content} under this key's descriptor key (32 bytes). Not for the hot path. */
    public byte[] descriptorTag(byte[] content) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(descriptorKey, "HmacSHA256"));
            return mac.doFinal(content);
        } catch (GeneralSecurityException e) {
            throw new QueueCryptoException("JCE HmacSHA256 unavailable: " + e.getClass().getSimpleName());
        }
    }

    byte[] aesKey() {
        return aesKey;
    }

    /** Zeroes the derived key bytes (engines built from them keep their own expanded copies). */
    public void destroy() {
        Arrays.fill(aesKey, (byte) 0);
        Arrays.fill(descriptorKey, (byte) 0);
    }

    @Override
    public String toString() {
        return "QueueKey[id=" + keyId + ", fingerprint=" + Long.toHexString(fingerprint) + "]";
    }
}
