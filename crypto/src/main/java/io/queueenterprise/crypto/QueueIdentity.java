package io.queueenterprise.crypto;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * What a queue's keys are derived for: its name and its 16-byte random incarnation id. The incarnation id is
 * created once when the queue is created (stored in the queue's descriptor; not secret; replicas get the same
 * one). Recreating a queue directory creates a new incarnation id and therefore new keys.
 */
public final class QueueIdentity {
    public static final int INCARNATION_ID_LENGTH = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String name;
    private final byte[] incarnationId;

    public QueueIdentity(String name, byte[] incarnationId) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("queue name must not be empty");
        }
        if (incarnationId.length != INCARNATION_ID_LENGTH) {
            throw new IllegalArgumentException("incarnation id must be 16 bytes, got " + incarnationId.length);
        }
        this.name = name;
        this.incarnationId = incarnationId.clone();
    }

    /** A new identity with a fresh random incarnation id: call once, when the queue is created. */
    public static QueueIdentity createNew(String name) {
        byte[] id = new byte[INCARNATION_ID_LENGTH];
        RANDOM.nextBytes(id);
        return new QueueIdentity(name, id);
    }

    public String name() {
        return name;
    }

    /** A copy of the incarnation id. */
    public byte[] incarnationId() {
        return incarnationId.clone();
    }

    byte[] incarnationIdNoCopy() {
        return incarnationId;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof QueueIdentity && ((QueueIdentity) o).name.equals(name)
                && Arrays.equals(((QueueIdentity) o).incarnationId, incarnationId);
    }

    @Override
    public int hashCode() {
        return name.hashCode() * 31 + Arrays.hashCode(incarnationId);
    }

    @Override
    public String toString() {
        return "QueueIdentity[" + name + ", incarnation=" + HexFormat.of().formatHex(incarnationId) + "]";
    }
}
