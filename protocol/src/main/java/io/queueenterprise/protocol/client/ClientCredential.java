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
    /** v3: the X25519 secret in the key material, the client's name and both ephemeral keys in the info. */
    private static final byte[] INFO_SESSION = ascii("queue-enterprise/client/v3/session");
    private static final byte[] SIGNED_TRANSCRIPT = ascii("queue-enterprise/client/v3/transcript");

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

    /**
     * The MAC of every frame of one connection once both proofs checked: HKDF(credential ‖ X25519 secret, salt = both
     * nonces, info = ".../v3/session" ‖ connection ‖ client name ‖ both ephemeral keys). The X25519 secret is known to
     * the client and the node alone: another client holding the credential derives nothing from the wire.
     */
    public ClientFrameMac sessionMac(long connection, byte[] clientNonce, byte[] nodeNonce, byte[] sharedSecret,
                                     byte[] clientEphemeral, byte[] nodeEphemeral, String clientName) {
        byte[] salt = concat(clientNonce, nodeNonce);
        byte[] name = ascii(clientName);
        byte[] info = ByteBuffer.allocate(INFO_SESSION.length + 8 + 1 + name.length + clientEphemeral.length + nodeEphemeral.length)
                .order(ByteOrder.LITTLE_ENDIAN).put(INFO_SESSION).putLong(connection).put((byte) name.length).put(name)
                .put(clientEphemeral).put(nodeEphemeral).array();
        byte[] ikm = concat(secret, sharedSecret);
        try {
            return new ClientFrameMac(hkdf(ikm, salt, info));
        } finally {
            Arrays.fill(ikm, (byte) 0);
        }
    }

    /**
     * The proof one side gives ({@code "node"} or {@code "client"}) under the credential over the connection, the queue,
     * the client's name, both fresh nonces and both ephemeral keys.
     */
    public byte[] proof(String side, long connection, String queue, String clientName, byte[] clientNonce, byte[] nodeNonce,
                        byte[] clientEphemeral, byte[] nodeEphemeral) {
        byte[] key = hkdf(secret, new byte[32], INFO_PROOF);
        byte[] s = ascii(side);
        byte[] q = queue.getBytes(StandardCharsets.UTF_8);
        byte[] n = ascii(clientName);
        ByteBuffer input = ByteBuffer.allocate(1 + s.length + 8 + 1 + q.length + 1 + n.length + 2 * ClientProtocol.NONCE_LENGTH
                        + clientEphemeral.length + nodeEphemeral.length).order(ByteOrder.LITTLE_ENDIAN);
        input.put((byte) s.length).put(s).putLong(connection).put((byte) q.length).put(q).put((byte) n.length).put(n)
                .put(clientNonce).put(nodeNonce).put(clientEphemeral).put(nodeEphemeral);
        return hmac(key, input.array());
    }

    /**
     * What a named client signs with its identity key in its PROOF: the whole handshake (connection, queue, its name,
     * both nonces, both ephemeral keys), so the signature stands for this connection alone.
     */
    public static byte[] signedTranscript(long connection, String queue, String clientName, byte[] clientNonce,
                                          byte[] nodeNonce, byte[] clientEphemeral, byte[] nodeEphemeral) {
        byte[] q = queue.getBytes(StandardCharsets.UTF_8);
        byte[] n = ascii(clientName);
        return ByteBuffer.allocate(SIGNED_TRANSCRIPT.length + 8 + 1 + q.length + 1 + n.length + 2 * ClientProtocol.NONCE_LENGTH
                        + clientEphemeral.length + nodeEphemeral.length).order(ByteOrder.LITTLE_ENDIAN)
                .put(SIGNED_TRANSCRIPT).putLong(connection).put((byte) q.length).put(q).put((byte) n.length).put(n)
                .put(clientNonce).put(nodeNonce).put(clientEphemeral).put(nodeEphemeral).array();
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
