package io.queueenterprise.crypto;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.generators.HKDFBytesGenerator;
import org.bouncycastle.crypto.params.HKDFParameters;

/**
 * Keys derived for one queue incarnation from one master key with HKDF-SHA256 (RFC 5869):
 * ikm = master key, salt = incarnation id, info = "queue-enterprise/v1/" + purpose + "/" + queue name (UTF-8).
 * Purposes: {@code aes-128} (16-byte AES key), {@code poly1305-r} (16 bytes), {@code fingerprint} (8 bytes,
 * big-endian {@code long}: a key check value the library records in the queue descriptor).
 */
public final class QueueKey {
    public static final String INFO_PREFIX = "queue-enterprise/v1/";
    public static final String PURPOSE_AES = "aes-128";
    public static final String PURPOSE_POLY1305_R = "poly1305-r";
    public static final String PURPOSE_FINGERPRINT = "fingerprint";

    private final int keyId;
    private final byte[] aesKey;
    private final byte[] polyR;
    private final long fingerprint;

    private QueueKey(int keyId, byte[] aesKey, byte[] polyR, long fingerprint) {
        this.keyId = keyId;
        this.aesKey = aesKey;
        this.polyR = polyR;
        this.fingerprint = fingerprint;
    }

    public static QueueKey derive(MasterKey master, QueueIdentity queue) {
        byte[] ikm = master.material();
        byte[] salt = queue.incarnationIdNoCopy();
        byte[] aes = hkdf(ikm, salt, PURPOSE_AES, queue.name(), 16);
        byte[] r = hkdf(ikm, salt, PURPOSE_POLY1305_R, queue.name(), 16);
        byte[] fp = hkdf(ikm, salt, PURPOSE_FINGERPRINT, queue.name(), 8);
        long f = 0;
        for (byte b : fp) {
            f = (f << 8) | (b & 0xFF);
        }
        return new QueueKey(master.id(), aes, r, f);
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

    byte[] aesKey() {
        return aesKey;
    }

    byte[] poly1305R() {
        return polyR;
    }

    /** Zeroes the derived key bytes (engines built from them keep their own expanded copies). */
    public void destroy() {
        Arrays.fill(aesKey, (byte) 0);
        Arrays.fill(polyR, (byte) 0);
    }

    @Override
    public String toString() {
        return "QueueKey[id=" + keyId + ", fingerprint=" + Long.toHexString(fingerprint) + "]";
    }
}
