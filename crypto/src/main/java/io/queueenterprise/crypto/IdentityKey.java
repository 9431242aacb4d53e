package io.queueenterprise.crypto;

import org.bouncycastle.crypto.params.Ed25519PrivateKeyParameters;
import org.bouncycastle.crypto.params.Ed25519PublicKeyParameters;
import org.bouncycastle.crypto.signers.Ed25519Signer;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;

/**
 * One party's identity: an Ed25519 private key (RFC 8032; a node's peer identity or a remote client's identity).
 * The file holds the 32-byte seed, raw, hex or base64 ({@link CredentialFile}: a file or folder others can write is
 * refused); its public key ({@link #publicKey()}, 32 bytes) is what the other side is configured with. Whoever holds
 * one identity key can sign as that identity and no other. Not a data key.
 */
public final class IdentityKey implements AutoCloseable {
    public static final int SEED_LENGTH = 32;
    public static final int PUBLIC_KEY_LENGTH = 32;
    public static final int SIGNATURE_LENGTH = 64;

    private final byte[] seed;
    private final Ed25519PrivateKeyParameters key;
    private final byte[] publicKey;

    private IdentityKey(byte[] seed) {
        this.seed = seed;
        this.key = new Ed25519PrivateKeyParameters(seed, 0);
        this.publicKey = key.generatePublicKey().getEncoded();
    }

    /** A fresh random identity. */
    public static IdentityKey generate(SecureRandom random) {
        byte[] seed = new byte[SEED_LENGTH];
        random.nextBytes(seed);
        return new IdentityKey(seed);
    }

    /** The identity whose seed is {@code seed} (32 bytes, copied). */
    public static IdentityKey of(byte[] seed) {
        if (seed.length != SEED_LENGTH) {
            throw new IllegalArgumentException("an identity key is a " + SEED_LENGTH + "-byte Ed25519 seed, not " + seed.length + " bytes");
        }
        return new IdentityKey(seed.clone());
    }

    /**
     * Reads an identity key file; the message names the file, never its content.
     *
     * @param what what the file is, for messages ("node identity key", "client identity key")
     */
    public static IdentityKey load(Path file, String what) throws CredentialFile.UnusableCredentialException {
        byte[] seed = CredentialFile.read(file, what, SEED_LENGTH);
        try {
            if (seed.length != SEED_LENGTH) {
                throw CredentialFile.unusable(what + " file " + file + " holds " + seed.length + " bytes; an identity key is exactly "
                        + SEED_LENGTH + " (an Ed25519 seed: raw, hex or base64; `qe identity` makes one)");
            }
            return new IdentityKey(seed.clone());
        } finally {
            Arrays.fill(seed, (byte) 0);
        }
    }

    /** The public key (32 bytes, a fresh copy). */
    public byte[] publicKey() {
        return publicKey.clone();
    }

    /** The public key as the configuration spells it: base64 of its 32 bytes. */
    public String publicKeyText() {
        return Base64.getEncoder().encodeToString(publicKey);
    }

    /** The seed in hex, as an identity key file holds it (for tools that write one). */
    public String seedHex() {
        return HexFormat.of().formatHex(seed);
    }

    /** The Ed25519 signature (64 bytes) of {@code message}. */
    public byte[] sign(byte[] message) {
        Ed25519Signer signer = new Ed25519Signer();
        signer.init(true, key);
        signer.update(message, 0, message.length);
        return signer.generateSignature();
    }

    /** Whether {@code signature} is {@code publicKey}'s Ed25519 signature of {@code message}; false for any malformed input. */
    public static boolean verify(byte[] publicKey, byte[] message, byte[] signature) {
        if (publicKey == null || publicKey.length != PUBLIC_KEY_LENGTH || signature.length != SIGNATURE_LENGTH) {
            return false;
        }
        try {
            Ed25519Signer verifier = new Ed25519Signer();
            verifier.init(false, new Ed25519PublicKeyParameters(publicKey, 0));
            verifier.update(message, 0, message.length);
            return verifier.verifySignature(signature);
        } catch (RuntimeException notAPoint) {
            return false;
        }
    }

    /**
     * A public key as configured: base64 (44 characters) or hex (64) of 32 bytes that decode to a point of the curve.
     *
     * @throws IllegalArgumentException saying what is wrong (never echoing more than the length of the text)
     */
    public static byte[] parsePublicKey(String text) {
        String t = text == null ? "" : text.strip();
        byte[] decoded = null;
        if (t.matches("[0-9a-fA-F]{64}")) {
            decoded = HexFormat.of().parseHex(t);
        } else if (t.matches("[A-Za-z0-9+/]{43}=?")) {
            try {
                decoded = Base64.getDecoder().decode(t.length() == 43 ? t + "=" : t);
            } catch (IllegalArgumentException e) {
                decoded = null;
            }
        }
        if (decoded == null || decoded.length != PUBLIC_KEY_LENGTH) {
            throw new IllegalArgumentException("is not an Ed25519 public key (base64 or hex of " + PUBLIC_KEY_LENGTH
                    + " bytes; " + t.length() + " characters given)");
        }
        try {
            new Ed25519PublicKeyParameters(decoded, 0).getEncoded();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("is not an Ed25519 public key (not a point of the curve)");
        }
        return decoded;
    }

    /** A short, stable name of a public key for logs and counters: the first 8 hex digits of it. */
    public static String fingerprint(byte[] publicKey) {
        return HexFormat.of().formatHex(publicKey, 0, 4);
    }

    @Override
    public void close() {
        Arrays.fill(seed, (byte) 0);
    }

    @Override
    public String toString() {
        return "IdentityKey[" + fingerprint(publicKey) + "]";
    }
}
