package io.queueenterprise.crypto;

import java.util.Arrays;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Opens envelopes in place. One per tailer thread: NOT thread-safe. Zero allocation in steady state: derived
 * keys are cached per key id (allocation only the first time a key id is seen, or after the ring changed).
 *
 * <p>The opener is pinned to the queue's {@link CipherMode}: an envelope carrying the other mode is refused
 * ({@link EnvelopeException.Reason#MODE_MISMATCH}); otherwise an attacker could strip the tag of an
 * authenticated envelope and relabel it as CTR (the keystream is the same in both modes).
 *
 * <p>In {@link CipherMode#AES_128_CTR} nothing is verified: a tampered, moved or wrong-key envelope opens to
 * garbage without an exception. Check {@link #keyFingerprint(int)} against the queue descriptor to catch a
 * wrong key.
 */
public final class ExcerptOpener {
    private final QueueIdentity queue;
    private final Supplier<KeyRing> keyRing;
    private final CipherMode mode;
    private final CryptoEngine engine;
    private final CtrKeystream ctr = new CtrKeystream();
    private final byte[] pad = new byte[16];

    private KeyRing cachedRing;
    private KeyContext[] cache = new KeyContext[4];
    private int cached;
    private KeyContext last;

    public ExcerptOpener(QueueIdentity queue, Supplier<KeyRing> keyRing, CipherMode mode, CryptoEngine engine) {
        this.queue = Objects.requireNonNull(queue, "queue");
        this.keyRing = Objects.requireNonNull(keyRing, "keyRing");
        this.mode = Objects.requireNonNull(mode, "mode");
        this.engine = Objects.requireNonNull(engine, "engine");
        this.cachedRing = Objects.requireNonNull(keyRing.get(), "key ring");
    }

    public ExcerptOpener(QueueIdentity queue, KeyRing keyRing, CipherMode mode, CryptoEngine engine) {
        this(queue, ExcerptSealer.constant(keyRing), mode, engine);
    }

    /**
     * Opens the envelope at {@code buf[off .. off + envelopeLength)} in place. In authenticated mode the tag is
     * verified (constant time) BEFORE anything is decrypted; on failure the buffer still holds the ciphertext.
     *
     * @param index the excerpt's queue index, as the tailer reports it
     * @return the plaintext length; the plaintext is at {@code buf[off + 8 ..]}
     * @throws EnvelopeException if the envelope is malformed, uses an unknown key id or fails authentication
     */
    public int openInPlace(long index, byte[] buf, int off, int envelopeLength) {
        Objects.checkFromIndexSize(off, envelopeLength, buf.length);
        CipherMode m = Envelope.checkHeader(buf, off, envelopeLength, index);
        int keyId = Envelope.keyId(buf, off);
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
        int salt = Envelope.salt(buf, off);
        int payload = off + Envelope.PAYLOAD_OFFSET;
        Poly1305Aes mac = k.mac;
        ctr.begin(k.aes, index, salt, 1, plainLen, mac == null ? null : pad);
        if (mac != null && !mac.verify(buf, off, Envelope.HEADER_LENGTH + plainLen, pad, buf, payload + plainLen)) {
            ctr.wipe();
            throw new EnvelopeException(EnvelopeException.Reason.AUTHENTICATION_FAILED, index, keyId);
        }
        ctr.finish(k.aes, index, salt, 1, buf, payload, plainLen);
        return plainLen;
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
        MasterKey key = ring.keyOrNull(keyId);
        if (key == null) {
            return null;
        }
        KeyContext fresh = new KeyContext(key, queue, mode, engine);
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
