package io.queueenterprise.crypto;

/** A key id was asked for that the {@link KeyRing} does not hold. */
public final class UnknownKeyException extends QueueCryptoException {
    private static final long serialVersionUID = 1L;
    private final int keyId;

    public UnknownKeyException(int keyId) {
        super("key id " + keyId + " is not in the key ring");
        this.keyId = keyId;
    }

    public int keyId() {
        return keyId;
    }
}
