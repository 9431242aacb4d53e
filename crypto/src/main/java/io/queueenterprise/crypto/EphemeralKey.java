package io.queueenterprise.crypto;

import org.bouncycastle.crypto.agreement.X25519Agreement;
import org.bouncycastle.crypto.params.X25519PrivateKeyParameters;
import org.bouncycastle.crypto.params.X25519PublicKeyParameters;

import java.security.SecureRandom;

/**
 * One side's X25519 key pair for one handshake (RFC 7748), drawn fresh for every CHALLENGE and CHALLENGE_RESPONSE and
 * forgotten once the session keys are derived: a leaked identity key later opens no recorded session (forward secrecy).
 */
public final class EphemeralKey {
    public static final int LENGTH = 32;
    private final X25519PrivateKeyParameters key;
    private final byte[] publicKey;

    private EphemeralKey(X25519PrivateKeyParameters key) {
        this.key = key;
        this.publicKey = key.generatePublicKey().getEncoded();
    }

    public static EphemeralKey generate(SecureRandom random) {
        return new EphemeralKey(new X25519PrivateKeyParameters(random));
    }

    /** The public half, as the handshake frame carries it (32 bytes, a fresh copy). */
    public byte[] publicKey() {
        return publicKey.clone();
    }

    /**
     * The X25519 secret shared with the holder of {@code peerPublic}'s private half; null when the peer's key is one
     * of the small-order points that would make the secret all zero (an attacker's choice, refused).
     */
    public byte[] agree(byte[] peerPublic) {
        X25519Agreement agreement = new X25519Agreement();
        agreement.init(key);
        byte[] secret = new byte[agreement.getAgreementSize()];
        try {
            agreement.calculateAgreement(new X25519PublicKeyParameters(peerPublic, 0), secret, 0);
        } catch (IllegalStateException | IllegalArgumentException degenerate) {
            return null;
        }
        return secret;
    }
}
