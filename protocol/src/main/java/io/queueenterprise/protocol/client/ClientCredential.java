package io.queueenterprise.protocol.client;

import io.queueenterprise.crypto.CredentialFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The per-cluster client credential: 32 or more random bytes (raw, hex or base64 in a file), a Secret of its own:
 * neither a data key (a node holding it opens nothing) nor the peer credential (a client holding it cannot pose
 * as a replica). Proven in a challenge-response at connect, never sent; frame MACs use keys derived from it.
 */
public final class ClientCredential implements AutoCloseable {
    public static final int MIN_LENGTH = 32;
    private static final String HMAC = "HmacSHA256";
    private static final byte[] INFO_HANDSHAKE = ascii("queue-enterprise/client/v1/handshake");
    private static final byte[] INFO_PROOF = ascii("queue-enterprise/client/v1/proof");
    private static final byte[] INFO_SESSION = ascii("queue-enterprise/client/v1/session");

    private final byte[] secret;

    private ClientCredential(byte[] secret) {
        this.secret = secret;
    }

    public static ClientCredential of(byte[] secret) {
        if (secret.length < MIN_LENGTH) {
            throw new ClientCredentialException("client credential has " + secret.length + " bytes; at least " + MIN_LENGTH
                    + " random bytes are needed");
        }
        return new ClientCredential(secret.clone());
    }

    /** Reads the credential file; a message names the file, never its content. */
    public static ClientCredential load(Path file) {
        try {
            return new ClientCredential(CredentialFile.read(file, "client credential", MIN_LENGTH));
        } catch (CredentialFile.UnusableCredentialException e) {
            throw new ClientCredentialException(e.getMessage());
        }
    }

    /** The MAC of handshake frames (and of refusals sent before a session exists). */
    public ClientFrameMac handshakeMac() {
        return new ClientFrameMac(hkdf(secret, new byte[32], INFO_HANDSHAKE));
    }

    /** The MAC of every frame of one connection once both proofs checked. */
    public ClientFrameMac sessionMac(long connection, byte[] clientNonce, byte[] nodeNonce) {
        byte[] salt = concat(clientNonce, nodeNonce);
        byte[] info = ByteBuffer.allocate(INFO_SESSION.length + 8).order(ByteOrder.LITTLE_ENDIAN)
                .put(INFO_SESSION).putLong(connection).array();
        return new ClientFrameMac(hkdf(secret, salt, info));
    }

    /** The proof one side gives ({@code "node"} or {@code "client"}) over the connection and both fresh nonces. */
    public byte[] proof(String side, long connection, String queue, byte[] clientNonce, byte[] nodeNonce) {
        byte[] key = hkdf(secret, new byte[32], INFO_PROOF);
        byte[] s = ascii(side);
        byte[] q = queue.getBytes(StandardCharsets.UTF_8);
        ByteBuffer input = ByteBuffer.allocate(1 + s.length + 8 + 1 + q.length + 2 * ClientProtocol.NONCE_LENGTH)
                .order(ByteOrder.LITTLE_ENDIAN);
        input.put((byte) s.length).put(s).putLong(connection).put((byte) q.length).put(q).put(clientNonce).put(nodeNonce);
        return hmac(key, input.array());
    }

    public static boolean proofEquals(byte[] a, byte[] b) {
        return MessageDigest.isEqual(a, b);
    }

    @Override
    public void close() {
        Arrays.fill(secret, (byte) 0);
    }

    @Override
    public String toString() {
        return "ClientCredential[" + secret.length + " bytes]";
    }

    static byte[] hkdf(byte[] ikm, byte[] salt, byte[] info) {
        byte[] prk = hmac(salt, ikm);
        return Arrays.copyOf(hmac(prk, concat(info, new byte[]{1})), 32); // one block: 32 bytes are all we need
    }

    private static byte[] hmac(byte[] key, byte[] data) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(new SecretKeySpec(key, HMAC));
            return mac.doFinal(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** A credential that cannot be read or is too short; the message names the file, never its content. */
    public static final class ClientCredentialException extends RuntimeException {
        public ClientCredentialException(String message) {
            super(message);
        }
    }
}
