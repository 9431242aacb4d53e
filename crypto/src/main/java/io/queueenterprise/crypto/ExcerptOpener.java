package io.queueenterprise.crypto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Opens envelopes. One per reader thread: NOT thread-safe. Zero allocation in steady state: derived keys are
 * cached per key id (allocation only the first time a key id is seen, or after the ring changed).
 *
 * <p>Two ways, each making what is checked exactly what is decrypted:
 * <ul>
 *   <li>{@link #openFromMemory}, for an envelope in shared (mapped) memory: ONE pass reads each byte once,
 *   authenticates it and decrypts it into the caller's array, then compares the tag; on failure the plaintext
 *   range of the caller's array is zeroed before the exception leaves. The queue library's tailer uses it.</li>
 *   <li>{@link #verify} then {@link #decryptTo}, for an envelope in the caller's private array: the header and tag
 *   are checked first and nothing is decrypted before, so a failed open writes nothing anywhere.</li>
 * </ul>
 * Never check mapped bytes and then decrypt them again: another process could change them in between.
 *
 * <p>The opener is pinned to the queue's {@link CipherMode}: an envelope carrying the other mode is refused
 * ({@link EnvelopeException.Reason#MODE_MISMATCH}); keys are also derived per mode, so a relabelled envelope
 * would not open anyway.
 *
 * <p>Index-bound envelopes fail authentication at any other index. Envelopes not bound to an index (remote
 * writers) must come in increasing writer sequence per writer epoch; a repeat or a step back is
 * {@link EnvelopeException.Reason#REPLAYED_OR_REORDERED}. {@link #forgetWriterOrder()} resets that memory when
 * the reader moves.
 *
 * <p>In {@link CipherMode#AES_128_CTR} nothing is verified: a tampered or wrong-key envelope opens to garbage
 * without an exception. The library checks key fingerprints against the queue descriptor to catch a wrong key.
 */
public final class ExcerptOpener {
    private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private final QueueIdentity queue;
    private final Supplier<KeyRing> keyRing;
    private final CipherMode mode;
    private final CryptoEngine engine;
    private final NonceKeystream keystream;
    private boolean destroyed;
    private final Poly1305 mac;
    private final WriterSequences writerOrder = new WriterSequences();
    /** {@link #openFromMemory}'s private copy of the last partial block, then of the tag. */
    private final byte[] partial = new byte[16];

    private KeyRing cachedRing;
    private KeyContext[] cache = new KeyContext[4];
    private int cached;
    private KeyContext last;

    /** The envelope last verified, for {@link #decryptTo}; null when none is pending. */
    private byte[] verifiedBuffer;
    private int verifiedOffset;
    private int verifiedLength;
    private KeyContext verifiedKey;
    private long verifiedEpoch;
    private int verifiedSequence;
    private boolean verifiedIndexBound;

    public ExcerptOpener(QueueIdentity queue, Supplier<KeyRing> keyRing, CipherMode mode, CryptoEngine engine) {
        this.queue = Objects.requireNonNull(queue, "queue");
        this.keyRing = Objects.requireNonNull(keyRing, "keyRing");
        this.mode = Objects.requireNonNull(mode, "mode");
        this.engine = Objects.requireNonNull(engine, "engine");
        this.keystream = new NonceKeystream(mode.authenticated());
        this.mac = mode.authenticated() ? new Poly1305() : null;
        this.cachedRing = Objects.requireNonNull(keyRing.get(), "key ring");
    }

    public ExcerptOpener(QueueIdentity queue, KeyRing keyRing, CipherMode mode, CryptoEngine engine) {
        this(queue, ExcerptSealer.constant(keyRing), mode, engine);
    }

    /**
     * Checks the envelope at {@code env[off .. off + envelopeLength)}: header, and in authenticated mode the tag
     * (constant time) with {@code index} bound when the envelope says so. Decrypts nothing.
     *
     * @param index the excerpt's queue index, as the reader found it
     * @return the plaintext length; call {@link #decryptTo} to get the plaintext
     * @throws EnvelopeException if the envelope is malformed, uses an unknown key id, fails authentication, or
     *                           (not index bound) repeats or steps back in its writer's sequence
     */
    public int verify(long index, byte[] env, int off, int envelopeLength) {
        if (destroyed) {
            throw new IllegalStateException("opener used after destroy()");
        }
        Objects.checkFromIndexSize(off, envelopeLength, env.length);
        verifiedBuffer = null;
        CipherMode m = Envelope.checkHeader(env, off, envelopeLength, index);
        int keyId = Envelope.keyId(env, off);
        if (m != mode) {
            throw new EnvelopeException(EnvelopeException.Reason.MODE_MISMATCH, index, keyId);
        }
        int plainLen = envelopeLength - m.overhead();
        if (plainLen < 0) {
            throw new EnvelopeException(EnvelopeException.Reason.TRUNCATED, index, keyId);
        }
        KeyContext k = context(keyId);
        if (k == null) {
            throw new EnvelopeException(EnvelopeException.Reason.UNKNOWN_KEY_ID, index, keyId);
        }
        long epoch = Envelope.epoch(env, off);
        int sequence = Envelope.sequence(env, off);
        boolean indexBound = Envelope.indexBound(env, off);
        keystream.locate(k.aes, epoch, sequence, plainLen);
        if (mac != null) {
            int payload = off + Envelope.PAYLOAD_OFFSET;
            int whole = plainLen & ~15;
            mac.init(keystream.oneTimeKey(), keystream.oneTimeKeyOffset());
            mac.absorbFull(env, payload, whole);
            mac.absorbTail(env, payload + whole, plainLen - whole, indexBound ? index : 0L,
                    Envelope.lengthWord(env, off, plainLen));
            if (!mac.verify(env, payload + plainLen)) {
                throw new EnvelopeException(EnvelopeException.Reason.AUTHENTICATION_FAILED, index, keyId);
            }
            if (!indexBound && !writerOrder.isNext(epoch, sequence)) {
                throw new EnvelopeException(EnvelopeException.Reason.REPLAYED_OR_REORDERED, index, keyId);
            }
        }
        verifiedBuffer = env;
        verifiedOffset = off;
        verifiedLength = plainLen;
        verifiedKey = k;
        verifiedEpoch = epoch;
        verifiedSequence = sequence;
        verifiedIndexBound = indexBound;
        return plainLen;
    }

    /**
     * Decrypts the envelope last passed to {@link #verify} (from the same buffer, which must not have changed)
     * into {@code dst[dstOff .. dstOff + plaintext length)}; in place when {@code dst} is that buffer at
     * offset + 16. Counts the excerpt as taken for the writer-order check.
     */
    public void decryptTo(byte[] dst, int dstOff) {
        byte[] env = verifiedBuffer;
        if (env == null) {
            throw new IllegalStateException("decryptTo without a successful verify");
        }
        verifiedBuffer = null;
        Objects.checkFromIndexSize(dstOff, verifiedLength, dst.length);
        keystream.xor(verifiedKey.aes, verifiedEpoch, verifiedSequence, env, verifiedOffset + Envelope.PAYLOAD_OFFSET,
                dst, dstOff, verifiedLength);
        if (mac != null && !verifiedIndexBound) {
            writerOrder.take(verifiedEpoch, verifiedSequence);
        }
    }

    /**
     * Opens the envelope at native {@code address} ({@code envelopeLength} bytes: an excerpt in a mapped queue file)
     * into {@code dst[dstOff ..]} in ONE pass: every byte of that memory is read once. The header is copied and
     * checked first; each ciphertext word then goes to the authenticator and, XOR the keystream, into {@code dst};
     * the tag is compared last. Another process rewriting the memory meanwhile cannot make what was authenticated
     * differ from what was decrypted. On any failure after the first plaintext byte was written, the plaintext
     * length of {@code dst} is zeroed before the exception leaves.
     *
     * <p>The caller guarantees that the range is readable native memory that stays mapped during the call.
     *
     * @return the plaintext length
     * @throws EnvelopeException as {@link #verify}
     */
    public int openFromMemory(long index, long address, int envelopeLength, byte[] dst, int dstOff) {
        Objects.requireNonNull(dst, "dst");
        return open(index, address, envelopeLength, dst, dstOff, 0L, 0);
    }

    /**
     * As {@link #openFromMemory(long, long, int, byte[], int)}, into native memory at {@code dst} (a caller's
     * direct buffer with {@code dstCapacity} bytes of room): the same one pass, the same wipe on failure.
     *
     * @throws IndexOutOfBoundsException if the plaintext would not fit {@code dstCapacity} (nothing written)
     */
    public int openFromMemory(long index, long address, int envelopeLength, long dst, int dstCapacity) {
        return open(index, address, envelopeLength, null, 0, dst, dstCapacity);
    }

    /** The one pass, into {@code dstArray[dstOff ..]} or, when it is null, into native memory at {@code dstAddress}. */
    private int open(long index, long address, int envelopeLength, byte[] dstArray, int dstOff, long dstAddress,
                     int dstCapacity) {
        if (destroyed) {
            throw new IllegalStateException("opener used after destroy()");
        }
        verifiedBuffer = null;
        if (envelopeLength < Envelope.HEADER_LENGTH) {
            throw new EnvelopeException(EnvelopeException.Reason.TRUNCATED, index, EnvelopeException.UNKNOWN_KEY_ID);
        }
        long first = NativeMemory.getLongLE(address); // read once: version, mode and flags, key id, sequence
        long epoch = NativeMemory.getLongLE(address + 8);
        CipherMode m = Envelope.checkHeader(first, envelopeLength, index);
        int keyId = Envelope.keyId(first);
        if (m != mode) {
            throw new EnvelopeException(EnvelopeException.Reason.MODE_MISMATCH, index, keyId);
        }
        int plainLen = envelopeLength - m.overhead();
        if (plainLen < 0) {
            throw new EnvelopeException(EnvelopeException.Reason.TRUNCATED, index, keyId);
        }
        if (dstArray != null) {
            Objects.checkFromIndexSize(dstOff, plainLen, dstArray.length);
        } else {
            Objects.checkFromIndexSize(0, plainLen, dstCapacity);
        }
        KeyContext k = context(keyId);
        if (k == null) {
            throw new EnvelopeException(EnvelopeException.Reason.UNKNOWN_KEY_ID, index, keyId);
        }
        int sequence = Envelope.sequence(first);
        boolean indexBound = Envelope.indexBound(first);
        keystream.locate(k.aes, epoch, sequence, plainLen);
        if (mac != null) {
            mac.init(keystream.oneTimeKey(), keystream.oneTimeKeyOffset());
        }
        long payload = address + Envelope.PAYLOAD_OFFSET;
        int whole = plainLen & ~15;
        keystream.xor(k.aes, epoch, sequence, 0, null, 0, payload, dstArray, dstOff, dstAddress, whole, mac);
        int rest = plainLen - whole;
        byte[] p = partial; // ciphertext, then the tag: never plaintext
        if (rest != 0) {
            long at = payload + whole;
            int i = 0;
            if (rest >= 8) {
                LONG_LE.set(p, 0, NativeMemory.getLongLE(at));
                i = 8;
            }
            for (; i < rest; i++) {
                p[i] = NativeMemory.getByte(at + i);
            }
        }
        if (mac != null) {
            mac.absorbTail(p, 0, rest, indexBound ? index : 0L, Envelope.lengthWord(first, plainLen));
        }
        if (rest != 0) {
            keystream.xor(k.aes, epoch, sequence, whole, p, 0, 0L, dstArray, dstOff + whole, dstAddress + whole, rest, null);
        }
        if (mac == null) {
            return plainLen;
        }
        LONG_LE.set(p, 0, NativeMemory.getLongLE(payload + plainLen));
        LONG_LE.set(p, 8, NativeMemory.getLongLE(payload + plainLen + 8));
        EnvelopeException.Reason refused = !mac.verify(p, 0) ? EnvelopeException.Reason.AUTHENTICATION_FAILED
                : !indexBound && !writerOrder.isNext(epoch, sequence) ? EnvelopeException.Reason.REPLAYED_OR_REORDERED
                : null;
        if (refused != null) {
            if (dstArray != null) {
                Arrays.fill(dstArray, dstOff, dstOff + plainLen, (byte) 0);
            } else {
                NativeMemory.zero(dstAddress, plainLen);
            }
            throw new EnvelopeException(refused, index, keyId);
        }
        if (!indexBound) {
            writerOrder.take(epoch, sequence);
        }
        return plainLen;
    }

    /**
     * Opens the envelope at {@code buf[off .. off + envelopeLength)} in place: {@link #verify}, then
     * {@link #decryptTo} at {@code off + 16}. On failure the buffer still holds the ciphertext.
     *
     * @return the plaintext length; the plaintext is at {@code buf[off + 16 ..]}
     */
    public int openInPlace(long index, byte[] buf, int off, int envelopeLength) {
        int length = verify(index, buf, off, envelopeLength);
        decryptTo(buf, off + Envelope.PAYLOAD_OFFSET);
        return length;
    }

    /** Forgets the writer order seen so far: call when the reader moves to another position. */
    public void forgetWriterOrder() {
        writerOrder.clear();
    }

    /**
     * The fingerprint (key check value) of the queue key derived from key {@code keyId}, for the library's
     * wrong-key check against the value recorded in the queue descriptor.
     *
     * @throws UnknownKeyException if the ring has no such key
     */
    public long keyFingerprint(int keyId) {
        KeyContext k = context(keyId);
        if (k == null) {
            throw new UnknownKeyException(keyId);
        }
        return k.queueKey.fingerprint();
    }

    public CipherMode mode() {
        return mode;
    }

    public CryptoEngine engine() {
        return engine;
    }

    /** Wipes precomputed keystream and derived keys; the opener refuses to work afterwards. */
    public void destroy() {
        destroyed = true;
        keystream.wipe();
        if (mac != null) {
            mac.wipe();
        }
        for (int i = 0; i < cached; i++) {
            cache[i].queueKey.destroy();
        }
    }

    /** The working state for a key id, or null if the current ring lacks it. */
    private KeyContext context(int keyId) {
        KeyRing ring = keyRing.get();
        if (ring != cachedRing) {
            ringChanged(ring);
        }
        KeyContext l = last;
        if (l != null && l.keyId == keyId) {
            return l;
        }
        for (int i = 0; i < cached; i++) {
            if (cache[i].keyId == keyId) {
                return last = cache[i];
            }
        }
        return derive(ring, keyId);
    }

    /** A key id not cached yet (out of line: {@link #context} stays small enough to inline into the open paths). */
    private KeyContext derive(KeyRing ring, int keyId) {
        MasterKey key = ring.keyOrNull(keyId);
        if (key == null) {
            return null;
        }
        KeyContext fresh;
        try {
            fresh = new KeyContext(key, queue, mode, engine);
        } catch (DestroyedKeyException replaced) {
            replaced.successorOf(ring, keyRing); // the ring was replaced since it was read: context() takes its successor
            return context(keyId);
        }
        if (cached == cache.length) {
            cache = Arrays.copyOf(cache, cached * 2);
        }
        cache[cached++] = fresh;
        return last = fresh;
    }

    /** Keeps cached contexts whose master key is unchanged in the new ring; drops the others. */
    private void ringChanged(KeyRing ring) {
        int kept = 0;
        for (int i = 0; i < cached; i++) {
            KeyContext c = cache[i];
            if (c.master.sameKeyAs(ring.keyOrNull(c.keyId))) {
                cache[kept++] = c;
            } else {
                c.queueKey.destroy();
            }
        }
        Arrays.fill(cache, kept, cached, null);
        cached = kept;
        last = null;
        cachedRing = ring;
    }
}
