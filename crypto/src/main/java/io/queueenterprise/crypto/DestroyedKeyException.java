package io.queueenterprise.crypto;

import java.util.function.Supplier;

/**
 * A master key was destroyed (wiped) before or while key material was derived from it: the ring holding it was
 * replaced by a reload or closed. Sealers and openers take their ring again and derive from its key instead.
 */
final class DestroyedKeyException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    DestroyedKeyException(int keyId) {
        super("MasterKey[id=" + keyId + "] has been destroyed");
    }

    /**
     * The ring {@code source} publishes now, when deriving from {@code ring} failed with this because {@code ring} was
     * replaced (and wiped) since it was read: its successor is already published. Sealer and opener share this.
     *
     * @throws DestroyedKeyException this, when {@code source} still hands out {@code ring} (its owner destroyed it) or none
     */
    KeyRing successorOf(KeyRing ring, Supplier<KeyRing> source) {
        KeyRing again = source.get();
        if (again == ring || again == null) {
            throw this;
        }
        return again;
    }
}
