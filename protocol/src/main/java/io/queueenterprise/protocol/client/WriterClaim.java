package io.queueenterprise.protocol.client;

import io.queueenterprise.crypto.WriterEpochs;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;

/**
 * Who owns a remote writer epoch. A remote writer session draws an Ed25519 key pair; its epoch is the top bit and
 * 63 bits of SHA-256(label, public key) ({@link #epochOf}), so the epoch itself commits to the key. On every
 * connection, before its first APPEND under an epoch, the client sends a CLAIM: the public key and a signature over
 * this connection's id and both handshake nonces and the epoch. A node appends under an epoch only on a connection
 * whose claim verified, so no other session, on any node, after any failover, can append under it (nothing on the
 * node is needed to check it: the epoch and the key check each other). The signature names the connection and both
 * nonces, so a claim captured off the wire is worth nothing on another connection.
 *
 * <p>Bound: taking over an epoch needs a second preimage of 63 bits of SHA-256 (about 2^63 hashes per target epoch)
 * or an Ed25519 forgery. Cost: one key pair per writer epoch (a new epoch after 2^32 writes or a failed write), one
 * signature per (connection, epoch) on the client, one verification per claim on the node; none per append.
 */
public final class WriterClaim {
    public static final int PUBLIC_KEY_LENGTH = 32;
    public static final int SIGNATURE_LENGTH = 64;
    /**
     * Claims a node verifies on one connection (each an Ed25519 verification on its duty cycle); beyond, it drops them.
     * A client that would claim more (a new epoch after each of many failed writes) connects anew instead.
     */
    public static final int MAX_PER_CONNECTION = 8;
    private static final byte[] EPOCH_LABEL = "queue-enterprise/writer-epoch/v1".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CLAIM_LABEL = "queue-enterprise/writer-claim/v1".getBytes(StandardCharsets.US_ASCII);
    /** The DER prefix of an X.509 SubjectPublicKeyInfo of an Ed25519 key, before its 32 raw bytes (RFC 8410). */
    private static final byte[] X509_PREFIX = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};

    private final PrivateKey privateKey;
    private final byte[] publicKey;
    private final long epoch;

    private WriterClaim(PrivateKey privateKey, byte[] publicKey) {
        this.privateKey = privateKey;
        this.publicKey = publicKey;
        this.epoch = epochOf(publicKey);
    }

    /** A new writer session's key pair (and so its epoch). */
    public static WriterClaim generate() {
        try {
            KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            byte[] encoded = pair.getPublic().getEncoded();
            return new WriterClaim(pair.getPrivate(), Arrays.copyOfRange(encoded, encoded.length - PUBLIC_KEY_LENGTH, encoded.length));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 is not available in this JVM", e);
        }
    }

    /** The epoch the public key commits to: the top bit ({@link WriterEpochs#isRandom}) and 63 bits of a hash. */
    public static long epochOf(byte[] publicKey) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(EPOCH_LABEL);
            sha.update(publicKey, 0, PUBLIC_KEY_LENGTH);
            return ByteBuffer.wrap(sha.digest()).order(ByteOrder.LITTLE_ENDIAN).getLong(0) | Long.MIN_VALUE;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    public long epoch() {
        return epoch;
    }

    /** The raw public key (a copy). */
    public byte[] publicKey() {
        return publicKey.clone();
    }

    /** The signature a CLAIM of this epoch carries on the connection with these handshake nonces. */
    public byte[] sign(long connection, byte[] clientNonce, byte[] nodeNonce) {
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(privateKey);
            s.update(signed(connection, clientNonce, nodeNonce, epoch));
            return s.sign();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Whether {@code signature} by {@code publicKey} claims {@code epoch} on this connection: the key commits to the
     * epoch and the signature verifies over the connection, both nonces and the epoch.
     */
    public static boolean verify(byte[] publicKey, byte[] signature, long epoch, long connection, byte[] clientNonce,
                                 byte[] nodeNonce) {
        if (publicKey.length != PUBLIC_KEY_LENGTH || signature.length != SIGNATURE_LENGTH || epochOf(publicKey) != epoch) {
            return false;
        }
        try {
            byte[] x509 = Arrays.copyOf(X509_PREFIX, X509_PREFIX.length + PUBLIC_KEY_LENGTH);
            System.arraycopy(publicKey, 0, x509, X509_PREFIX.length, PUBLIC_KEY_LENGTH);
            PublicKey key = KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(x509));
            Signature s = Signature.getInstance("Ed25519");
            s.initVerify(key);
            s.update(signed(connection, clientNonce, nodeNonce, epoch));
            return s.verify(signature);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false; // not a point on the curve, or a signature of the wrong shape
        }
    }

    private static byte[] signed(long connection, byte[] clientNonce, byte[] nodeNonce, long epoch) {
        ByteBuffer b = ByteBuffer.allocate(CLAIM_LABEL.length + 8 + 2 * ClientProtocol.NONCE_LENGTH + 8).order(ByteOrder.LITTLE_ENDIAN);
        b.put(CLAIM_LABEL).putLong(connection).put(clientNonce, 0, ClientProtocol.NONCE_LENGTH)
                .put(nodeNonce, 0, ClientProtocol.NONCE_LENGTH).putLong(epoch);
        return b.array();
    }

    @Override
    public String toString() {
        return "WriterClaim[epoch=" + Long.toHexString(epoch) + "]";
    }
}
