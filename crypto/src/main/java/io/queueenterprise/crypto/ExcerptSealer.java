package io.queueenterprise.crypto;

import java.security.SecureRandom;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Seals excerpts in place. One per appender thread: NOT thread-safe. Zero allocation in steady state; it
 * re-derives keys only when the key ring object returned by the supplier changes and names another active key.
 *
 * <p>Salt: a per-sealer 32-bit sequence, a bijective mix (murmur3 fmix32) of a Weyl counter whose start and
 * step are seeded from {@link SecureRandom} at construction. Its job is uniqueness when the same index is
 * sealed again (a write rolled back or torn by a crash and rewritten), not secrecy: one sealer never repeats
 * a salt within 2^32 seals, and two sealers (e.g. before and after a crash) collide with probability 2^-32.
 */
public final class ExcerptSealer {
    private final QueueIdentity queue;
    private final Supplier<KeyRing> keyRing;
    private final CipherMode mode;
    private final CryptoEngine engine;
    private final CtrKeystream ctr = new CtrKeystream();
    private final byte[] pad = new byte[16];

    private KeyRing cachedRing;
    private KeyContext active;
    private int saltState;
    private final int saltStep;

    /**
     * @param keyRing read once per seal (make it a volatile read, e.g. {@link KeyRingSource#current()} or
     *                {@code AtomicReference::get}); its active key seals new excerpts.
     */
    public ExcerptSealer(QueueIdentity queue, Supplier<KeyRing> keyRing, CipherMode mode, CryptoEngine engine) {
        this.queue = Objects.requireNonNull(queue, "queue");
        this.keyRing = Objects.requireNonNull(keyRing, "keyRing");
        this.mode = Objects.requireNonNull(mode, "mode");
        this.engine = Objects.requireNonNull(engine, "engine");
        SecureRandom seed = new SecureRandom();
        this.saltState = seed.nextInt();
        this.saltStep = seed.nextInt() | 1; // odd: full period 2^32
        refresh(Objects.requireNonNull(keyRing.get(), "key ring"));
    }

    /** Convenience: a fixed key ring. */
    public ExcerptSealer(QueueIdentity queue, KeyRing keyRing, CipherMode mode, CryptoEngine engine) {
        this(queue, constant(keyRing), mode, engine);
    }

    static Supplier<KeyRing> constant(KeyRing ring) {
        Objects.requireNonNull(ring, "keyRing");
        return () -> ring;
    }

    /**
     * Seals the plaintext at {@code buf[off + 8 .. off + 8 + plaintextLength)} in place: writes the header at
     * {@code off}, encrypts, appends the tag (authenticated mode).
     *
     * @param index the excerpt's queue index (Chronicle cycle + sequence); part of the counter block, not stored
     * @return the envelope length, {@link Envelope#sealedLength(CipherMode, int)}
     * @throws IndexOutOfBoundsException if {@code buf} cannot hold the envelope
     */
    public int sealInPlace(long index, byte[] buf, int off, int plaintextLength) {
        int envLen = Envelope.sealedLength(mode, plaintextLength);
        Objects.checkFromIndexSize(off, envLen, buf.length);
        KeyRing ring = keyRing.get();
        if (ring != cachedRing) {
            refresh(ring);
        }
        KeyContext k = active;
        int salt = nextSalt();
        Envelope.writeHeader(buf, off, mode, k.keyId, salt);
        int payload = off + Envelope.PAYLOAD_OFFSET;
        Poly1305Aes mac = k.mac;
        ctr.begin(k.aes, index, salt, 1, plaintextLength, mac == null ? null : pad);
        ctr.finish(k.aes, index, salt, 1, buf, payload, plaintextLength);
        if (mac != null) {
            mac.tag(buf, off, Envelope.HEADER_LENGTH, buf, payload, plaintextLength, pad, buf, payload + plaintextLength);
        }
        return envLen;
    }

    private int nextSalt() {
        int x = saltState += saltStep;
        x ^= x >>> 16;
        x *= 0x85ebca6b;
        x ^= x >>> 13;
        x *= 0xc2b2ae35;
        x ^= x >>> 16;
        return x;
    }

    private void refresh(KeyRing ring) {
        MasterKey key = ring.activeKey();
        if (active == null || !active.master.sameKeyAs(key)) {
            KeyContext fresh = new KeyContext(key, queue, mode, engine);
            if (active != null) {
                active.queueKey.destroy();
            }
            active = fresh;
        }
        cachedRing = ring;
    }

    /** Key id of the key new excerpts are sealed with (as of the last seal or construction). */
    public int activeKeyId() {
        return active.keyId;
    }

    /** Fingerprint (key check value) of the active derived key; the library records it in the queue descriptor. */
    public long activeKeyFingerprint() {
        return active.queueKey.fingerprint();
    }

    public CipherMode mode() {
        return mode;
    }

    public CryptoEngine engine() {
        return engine;
    }
}
