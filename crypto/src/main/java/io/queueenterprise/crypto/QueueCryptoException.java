package io.queueenterprise.crypto;

/**
 * Base of every exception the crypto module throws for a cryptographic or key-configuration problem.
 * Messages never contain key material or plaintext.
 */
public class QueueCryptoException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public QueueCryptoException(String message) {
        super(message);
    }

    public QueueCryptoException(String message, Throwable cause) {
        super(message, cause);
    }
}
