package io.queueenterprise.crypto;

import java.lang.invoke.VarHandle;
import java.security.MessageDigest;
import java.util.Arrays;
import javax.security.auth.Destroyable;

/**
 * A master key: a key id (0..65535) and 16 or 32 secret bytes. {@link #toString()} never shows the material;
 * {@link #destroy()} zeroes it. Per-queue keys are derived from it with HKDF-SHA256 ({@link QueueKey}).
 *
 * <p>Production keys come from files only ({@link KeyRingSource}); there is deliberately no factory that parses
 * a key from a String (command-line arguments and environment variables leak into process listings and logs).
 */
public final class MasterKey implements Destroyable {
    private final int id;
    private final byte[] material;
    private volatile boolean destroyed;

    private MasterKey(int id, byte[] material) {
        this.id = id;
        this.material = material;
    }

    /** A key from raw bytes (copied). {@code material} must be 16 or 32 bytes. */
    public static MasterKey of(int id, byte[] material) {
        Envelope.checkKeyId(id);
        if (material.length != 16 && material.length != 32) {
            throw new IllegalArgumentException("master key must be 16 or 32 bytes, got " + material.length);
        }
        return new MasterKey(id, material.clone());
    }

    public int id() {
        return id;
    }

    /** Number of key bytes (16 or 32). */
    public int length() {
        return material.length;
    }

    /** The material itself, not a copy: package-private, for derivation only. */
    byte[] material() {
        if (destroyed) {
            throw new IllegalStateException("MasterKey[id=" + id + "] has been destroyed");
        }
        return material;
    }

    /**
     * A copy of the material, for derivation; the caller zeroes it. A key wiped by another thread meanwhile (a key
     * ring replaced by a reload is wiped while a sealer may still be deriving from it) is never returned half-zeroed:
     * the flag is checked after the copy, as a seqlock validates ({@link #destroy()} raises it before zeroing).
     *
     * @throws DestroyedKeyException if the key was destroyed before or during the copy
     */
    byte[] materialCopy() {
        if (destroyed) {
            throw new DestroyedKeyException(id);
        }
        byte[] copy = material.clone();
        VarHandle.acquireFence(); // the copy's reads complete before the flag is read again
        if (destroyed) {
            Arrays.fill(copy, (byte) 0);
            throw new DestroyedKeyException(id);
        }
        return copy;
    }

    /** Same id and same bytes (constant-time comparison of the bytes). */
    boolean sameKeyAs(MasterKey other) {
        return other != null && other.id == id && !destroyed && !other.destroyed
                && MessageDigest.isEqual(material, other.material);
    }

    /** Zeroes the key bytes; afterwards the key cannot be used. */
    @Override
    public void destroy() {
        destroyed = true;
        VarHandle.fullFence(); // the flag is visible before any byte is zeroed (materialCopy relies on it)
        Arrays.fill(material, (byte) 0);
    }

    @Override
    public boolean isDestroyed() {
        return destroyed;
    }

    @Override
    public String toString() {
        return "MasterKey[id=" + id + ", " + material.length + " bytes" + (destroyed ? ", destroyed" : "") + "]";
    }
}
