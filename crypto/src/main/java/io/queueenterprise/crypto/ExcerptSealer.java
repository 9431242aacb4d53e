package io.queueenterprise.crypto;

import java.util.Objects;
import java.util.function.Supplier;

/**
 * Seals excerpts. One per writer session (an appender thread, a remote client session): NOT thread-safe.
 * Zero allocation in steady state; it re-derives keys only when the key ring names another active key.
 *
 * <p>Nonce = (writer epoch, writer sequence): the epoch comes from {@link WriterEpochs} when the sealer is
 * made (and again after 2^32 seals), the sequence counts 0, 1, 2, ... So one sealer never repeats a nonce,
 * and two sealers share one only if their epochs collide (see {@link WriterEpochs}).
 *
 * <p>Two-phase sealing for writers that learn the index late: {@link #beginSeal} does all the work that does
 * not need the index (key refresh, AES, encryption, Poly1305 over the whole ciphertext blocks) before the caller
 * takes Chronicle's write lock; {@link #completeSeal(long)} absorbs the index and writes the tag inside it.
 * {@link #sealUnbound} is for writers that never learn the index (a remote client).
 */
public final class ExcerptSealer {
    private static final long SEQUENCES_PER_EPOCH = 1L << 32;

    private final QueueIdentity queue;
    private final Supplier<KeyRing> keyRing;
    private final CipherMode mode;
    private final CryptoEngine engine;
    private final WriterEpochs epochs;
    private final NonceKeystream keystream;
    private boolean destroyed;
    private final Poly1305 mac;

    private KeyRing cachedRing;
    private KeyContext active;
    private long epoch;
    private long sealedInEpoch;

    /** The envelope waiting for {@link #completeSeal}: its buffer, offset and plaintext length; null when none. */
    private byte[] pendingBuffer;
    private int pendingOffset;
    private int pendingLength;
    private boolean pendingIndexBound;

    /**
     * @param keyRing read once per seal (make it a volatile read, e.g. {@link KeyRingSource#current()}); its
     *                active key seals new excerpts.
     * @param epochs  where this writer session's epoch comes from
     */
    public ExcerptSealer(QueueIdentity queue, Supplier<KeyRing> keyRing, CipherMode mode, CryptoEngine engine,
                         WriterEpochs epochs) {
        this.queue = Objects.requireNonNull(queue, "queue");
        this.keyRing = Objects.requireNonNull(keyRing, "keyRing");
        this.mode = Objects.requireNonNull(mode, "mode");
        this.engine = Objects.requireNonNull(engine, "engine");
        this.epochs = Objects.requireNonNull(epochs, "epochs");
        this.keystream = new NonceKeystream(mode.authenticated());
        this.mac = mode.authenticated() ? new Poly1305() : null;
        this.epoch = epochs.next();
        refresh(Objects.requireNonNull(keyRing.get(), "key ring"));
    }

    /** A writer session with a random epoch ({@link WriterEpochs#random()}). */
    public ExcerptSealer(QueueIdentity queue, Supplier<KeyRing> keyRing, CipherMode mode, CryptoEngine engine) {
        this(queue, keyRing, mode, engine, WriterEpochs.random());
    }

    /** Convenience: a fixed key ring and a random epoch. */
    public ExcerptSealer(QueueIdentity queue, KeyRing keyRing, CipherMode mode, CryptoEngine engine) {
        this(queue, constant(keyRing), mode, engine, WriterEpochs.random());
    }

    static Supplier<KeyRing> constant(KeyRing ring) {
        Objects.requireNonNull(ring, "keyRing");
        return () -> ring;
    }

    /**
     * Phase one of an index-bound seal: writes the header at {@code env[envOff]} and the ciphertext of
     * {@code src[srcOff .. srcOff+plaintextLength)} at {@code env[envOff + 16]} ({@code src} may be that very
     * region: sealing in place). Call {@link #completeSeal(long)} before the next seal.
     *
     * @return the envelope length, {@link Envelope#sealedLength(CipherMode, int)}
     */
    public int beginSeal(byte[] src, int srcOff, int plaintextLength, byte[] env, int envOff) {
        return begin(src, srcOff, plaintextLength, env, envOff, mode.authenticated());
    }

    /**
     * Phase two: binds the excerpt's index into the tag (authenticated mode) and writes the tag. The envelope
     * is complete afterwards. In CTR mode nothing is bound and this only ends the seal.
     */
    public void completeSeal(long index) {
        byte[] env = pendingBuffer;
        if (env == null) {
            throw new IllegalStateException("completeSeal without beginSeal");
        }
        pendingBuffer = null;
        if (mac != null) {
            int payload = pendingOffset + Envelope.PAYLOAD_OFFSET;
            int partial = pendingLength & 15;
            mac.absorbTail(env, payload + pendingLength - partial, partial, pendingIndexBound ? index : 0L,
                    Envelope.lengthWord(env, pendingOffset, pendingLength));
            mac.finish(env, payload + pendingLength);
        }
    }

    /**
     * Seals in place, index bound: plaintext at {@code buf[off + 16 ..]}, header written at {@code off}.
     *
     * @param index the excerpt's queue index (Chronicle cycle + sequence); authenticated, not stored
     * @return the envelope length
     */
    public int sealInPlace(long index, byte[] buf, int off, int plaintextLength) {
        int length = begin(buf, off + Envelope.PAYLOAD_OFFSET, plaintextLength, buf, off, mode.authenticated());
        completeSeal(index);
        return length;
    }

    /**
     * Seals in place for a writer that does not know the index its excerpt will land at (a remote client).
     * Readers in authenticated mode detect a replayed or reordered excerpt by its writer sequence instead.
     */
    public int sealUnbound(byte[] buf, int off, int plaintextLength) {
        int length = begin(buf, off + Envelope.PAYLOAD_OFFSET, plaintextLength, buf, off, false);
        completeSeal(0L); // not bound: 0 is absorbed in place of the index
        return length;
    }

    /**
     * CTR mode only: seals {@code src[srcOff .. +plaintextLength)} into native memory at {@code dst} (a direct
     * staging buffer with room for {@link Envelope#sealedLength} bytes), header and ciphertext, in one pass. Binds
     * no index, as no CTR envelope does. The caller guarantees the destination range is writable native memory.
     *
     * @return the envelope length
     * @throws IllegalStateException in the authenticated mode, whose index is bound inside the write lock
     *                               ({@link #beginSeal} / {@link #completeSeal})
     */
    public int sealToMemory(byte[] src, int srcOff, int plaintextLength, long dst) {
        Objects.checkFromIndexSize(srcOff, plaintextLength, src.length);
        int sequence = nextNonceToMemory(plaintextLength, dst);
        keystream.xor(active.aes, epoch, sequence, 0, src, srcOff, 0L, null, 0, dst + Envelope.PAYLOAD_OFFSET, plaintextLength, null);
        return Envelope.sealedLength(mode, plaintextLength);
    }

    /** As {@link #sealToMemory(byte[], int, int, long)}, from native memory at {@code src} (a direct buffer). */
    public int sealToMemory(long src, int plaintextLength, long dst) {
        int sequence = nextNonceToMemory(plaintextLength, dst);
        keystream.xor(active.aes, epoch, sequence, 0, null, 0, src, null, 0, dst + Envelope.PAYLOAD_OFFSET, plaintextLength, null);
        return Envelope.sealedLength(mode, plaintextLength);
    }

    /**
     * Takes the next nonce for a CTR seal into memory, writes the header at {@code dst}, locates the keystream;
     * returns the nonce's writer sequence.
     */
    private int nextNonceToMemory(int plaintextLength, long dst) {
        if (mode.authenticated()) {
            throw new IllegalStateException("sealToMemory is for " + CipherMode.AES_128_CTR + " only: " + mode
                    + " binds the index inside the write lock (beginSeal / completeSeal)");
        }
        if (destroyed) {
            throw new IllegalStateException("sealer used after destroy()");
        }
        if (pendingBuffer != null) {
            throw new IllegalStateException("sealToMemory before completeSeal of the previous excerpt");
        }
        Envelope.checkPlaintextLength(plaintextLength);
        int sequence = takeNonce();
        KeyContext k = active;
        NativeMemory.putLongLE(dst, Envelope.firstWord(mode, false, k.keyId, sequence));
        NativeMemory.putLongLE(dst + 8, epoch);
        keystream.locate(k.aes, epoch, sequence, plaintextLength);
        return sequence;
    }

    /**
     * The next nonce: the active key after a ring change, a new epoch after 2^32 seals, and the next writer sequence
     * in it ({@link #epoch} is the nonce's epoch afterwards).
     */
    private int takeNonce() {
        KeyRing ring = keyRing.get();
        if (ring != cachedRing) {
            refresh(ring);
        }
        if (sealedInEpoch == SEQUENCES_PER_EPOCH) {
            epoch = epochs.next();
            sealedInEpoch = 0;
        }
        return (int) sealedInEpoch++;
    }

    private int begin(byte[] src, int srcOff, int plaintextLength, byte[] env, int envOff, boolean indexBound) {
        if (destroyed) {
            throw new IllegalStateException("sealer used after destroy()");
        }
        int envLen = Envelope.sealedLength(mode, plaintextLength);
        Objects.checkFromIndexSize(envOff, envLen, env.length);
        Objects.checkFromIndexSize(srcOff, plaintextLength, src.length);
        if (pendingBuffer != null) {
            throw new IllegalStateException("beginSeal again before completeSeal of the previous excerpt");
        }
        int sequence = takeNonce();
        KeyContext k = active;
        Envelope.writeHeader(env, envOff, mode, indexBound, k.keyId, epoch, sequence);
        int payload = envOff + Envelope.PAYLOAD_OFFSET;
        keystream.locate(k.aes, epoch, sequence, plaintextLength);
        keystream.xor(k.aes, epoch, sequence, src, srcOff, env, payload, plaintextLength);
        if (mac != null) {
            // Whole ciphertext blocks now; the rest, with the header's fields in the last block, in completeSeal.
            mac.init(keystream.oneTimeKey(), keystream.oneTimeKeyOffset());
            mac.absorbFull(env, payload, plaintextLength & ~15);
        }
        pendingIndexBound = indexBound;
        pendingBuffer = env;
        pendingOffset = envOff;
        pendingLength = plaintextLength;
        return envLen;
    }

    /** Abandons a begun seal (the caller's write failed before {@link #completeSeal}). The nonce stays used. */
    public void abandonSeal() {
        pendingBuffer = null;
    }

    private void refresh(KeyRing ring) {
        for (;;) {
            MasterKey key = ring.activeKey();
            if (active != null && active.master.sameKeyAs(key)) {
                break;
            }
            KeyContext fresh;
            try {
                fresh = new KeyContext(key, queue, mode, engine);
            } catch (DestroyedKeyException replaced) {
                ring = replaced.successorOf(ring, keyRing); // the ring was replaced since it was read
                continue;
            }
            if (active != null) {
                active.queueKey.destroy();
            }
            active = fresh;
            break;
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

    /**
     * Starts a new epoch for the next seal. A remote writer does so after a write that failed: its sequence was used
     * (the envelope crossed the wire, so it is never sealed again) but may not be in the queue, and a node takes
     * only the next sequence of an epoch.
     */
    public void newEpoch() {
        epoch = epochs.next();
        sealedInEpoch = 0;
    }

    /** Test hook: continue this epoch at {@code sequence} (to reach the end of the sequence space quickly). */
    void continueAtSequence(long sequence) {
        sealedInEpoch = sequence;
    }

    /** This writer session's current epoch. */
    public long epoch() {
        return epoch;
    }

    public CipherMode mode() {
        return mode;
    }

    public CryptoEngine engine() {
        return engine;
    }

    /** Wipes precomputed keystream and derived keys; the sealer refuses to work afterwards. */
    public void destroy() {
        destroyed = true;
        keystream.wipe();
        if (mac != null) {
            mac.wipe();
        }
        if (active != null) {
            active.queueKey.destroy();
        }
    }
}
