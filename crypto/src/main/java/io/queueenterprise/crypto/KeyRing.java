package io.queueenterprise.crypto;

import java.util.Arrays;
import java.util.Collection;
import java.util.List;

/**
 * Immutable set of master keys by key id, plus the active key id used for new writes. Rotation makes a new
 * ring with the new key added and active ({@link #rotateTo(MasterKey)}); old keys stay for reading.
 */
public final class KeyRing {
    private final int[] ids; // sorted ascending
    private final MasterKey[] keys; // parallel to ids
    private final int activeKeyId;
    private final MasterKey active;

    private KeyRing(int[] ids, MasterKey[] keys, int activeKeyId) {
        this.ids = ids;
        this.keys = keys;
        this.activeKeyId = activeKeyId;
        int i = Arrays.binarySearch(ids, activeKeyId);
        if (i < 0) {
            throw new UnknownKeyException(activeKeyId);
        }
        this.active = keys[i];
    }

    /** A ring of {@code keys} (distinct ids) whose key {@code activeKeyId} is used for new writes. */
    public static KeyRing of(int activeKeyId, Collection<MasterKey> keys) {
        MasterKey[] sorted = keys.toArray(new MasterKey[0]);
        if (sorted.length == 0) {
            throw new IllegalArgumentException("a key ring needs at least one key");
        }
        Arrays.sort(sorted, (a, b) -> Integer.compare(a.id(), b.id()));
        int[] ids = new int[sorted.length];
        for (int i = 0; i < sorted.length; i++) {
            ids[i] = sorted[i].id();
            if (i > 0 && ids[i] == ids[i - 1]) {
                throw new IllegalArgumentException("duplicate key id " + ids[i]);
            }
        }
        return new KeyRing(ids, sorted, activeKeyId);
    }

    public static KeyRing of(int activeKeyId, MasterKey... keys) {
        return of(activeKeyId, List.of(keys));
    }

    /** A ring holding one key, active. */
    public static KeyRing single(MasterKey key) {
        return of(key.id(), key);
    }

    /**
     * Rotation: a new ring with {@code newKey} added (replacing nothing: its id must be new) and made active.
     */
    public KeyRing rotateTo(MasterKey newKey) {
        if (contains(newKey.id())) {
            throw new IllegalArgumentException("key id " + newKey.id() + " already in the ring; rotation needs a new id");
        }
        MasterKey[] more = Arrays.copyOf(keys, keys.length + 1);
        more[keys.length] = newKey;
        return of(newKey.id(), List.of(more));
    }

    /** A new ring with the same keys and another active key id (which must be present). */
    public KeyRing withActiveKeyId(int keyId) {
        return new KeyRing(ids, keys, keyId);
    }

    public int activeKeyId() {
        return activeKeyId;
    }

    public MasterKey activeKey() {
        return active;
    }

    public boolean contains(int keyId) {
        return Arrays.binarySearch(ids, keyId) >= 0;
    }

    /** The key with this id; allocation-free. @throws UnknownKeyException if absent */
    public MasterKey key(int keyId) {
        MasterKey k = keyOrNull(keyId);
        if (k == null) {
            throw new UnknownKeyException(keyId);
        }
        return k;
    }

    MasterKey keyOrNull(int keyId) {
        int i = Arrays.binarySearch(ids, keyId);
        return i < 0 ? null : keys[i];
    }

    /** Key ids, ascending (a copy). */
    public int[] keyIds() {
        return ids.clone();
    }

    public int size() {
        return ids.length;
    }

    @Override
    public String toString() {
        return "KeyRing[active=" + activeKeyId + ", ids=" + Arrays.toString(ids) + "]";
    }
}
