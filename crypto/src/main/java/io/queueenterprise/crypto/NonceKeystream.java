package io.queueenterprise.crypto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * AES-CTR keystream for envelope nonces, computed for several excerpts per AES call. Counter block =
 * writer epoch (8 bytes, big-endian) || writer sequence (4) || block counter (4). Per nonce, blocks 0 and 1
 * are the one-time Poly1305 key (authenticated mode only) and the keystream starts at block 2.
 *
 * <p>Why batches: a writer's next nonces are known in advance (same epoch, sequence + 1, + 2, ...) and a
 * reader of one writer sees them in that order, so one {@code Cipher.update} over the blocks of the next
 * excerpts pays the JCE call overhead once instead of per excerpt. The batch length adapts: it doubles while
 * every precomputed nonce is used and halves when a batch serves only the nonce that caused it (a reader of
 * interleaved writers), so a miss never costs more than a small multiple of the work it needs.
 *
 * <p>Single-threaded; allocation-free.
 */
final class NonceKeystream {
    static final int MAX_BATCH_BLOCKS = 256;
    static final int MAX_BATCH_EXCERPTS = 64;
    /** Data blocks per nonce kept in a batch; longer excerpts compute the rest on demand. */
    static final int MAX_PRECOMPUTED_DATA_BLOCKS = 16;
    static final int FIRST_DATA_COUNTER = 2;

    private static final VarHandle LONG_BE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT_BE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG_NATIVE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final boolean oneTimeKeys;
    private final int keyBlocks;
    private final byte[] counters = new byte[MAX_BATCH_BLOCKS * 16];
    private final byte[] keystream = new byte[MAX_BATCH_BLOCKS * 16];
    private final byte[] overflowCounters = new byte[MAX_BATCH_BLOCKS * 16];
    private final byte[] overflow = new byte[MAX_BATCH_BLOCKS * 16];
    /** The one-pass open's private copy of one segment's ciphertext, for the authenticator. */
    private final byte[] macInput = new byte[MAX_BATCH_BLOCKS * 16];

    private AesBlockFunction batchKey;
    private long batchEpoch;
    private int batchFirstSequence;
    private int batchCount;
    private int blocksPerNonce;
    private int hits;
    private int batchTarget = 4;

    /** What {@link #counters} holds besides the sequences: the epoch and block counters of this many blocks. */
    private long layoutEpoch;
    private int layoutPerNonce;
    private int layoutBlocks;

    /** Where {@link #segment(AesBlockFunction, long, int, int, int)} left the keystream it made available. */
    private byte[] segment;
    private int segmentOffset;

    /** The located nonce: offset of its first block in {@link #keystream}. */
    private int located;

    NonceKeystream(boolean oneTimeKeys) {
        this.oneTimeKeys = oneTimeKeys;
        this.keyBlocks = oneTimeKeys ? FIRST_DATA_COUNTER : 0;
    }

    /**
     * Makes the key material of nonce (epoch, sequence) available, computing a batch on a miss.
     * Then {@link #oneTimeKey()} / {@link #oneTimeKeyOffset()} and {@link #xor} refer to this nonce.
     */
    void locate(AesBlockFunction aes, long epoch, int sequence, int dataLength) {
        int i = sequence - batchFirstSequence;
        if (aes == batchKey && epoch == batchEpoch && Integer.compareUnsigned(i, batchCount) < 0) {
            hits++;
            located = i * blocksPerNonce * 16;
            return;
        }
        refill(aes, epoch, sequence, dataLength);
        hits = 1;
        located = 0;
    }

    private void refill(AesBlockFunction aes, long epoch, int sequence, int dataLength) {
        if (batchKey != null) {
            if (hits >= batchCount) {
                batchTarget = Math.min(MAX_BATCH_EXCERPTS, batchTarget * 2);
            } else if (hits <= 1) {
                batchTarget = Math.max(1, batchTarget / 2);
            }
        }
        int dataBlocks = Math.min(MAX_PRECOMPUTED_DATA_BLOCKS, (int) (((long) dataLength + 15) >>> 4));
        int per = Math.max(1, keyBlocks + dataBlocks);
        // Never past sequence 2^32 - 1: the writer takes a new epoch there.
        long left = (1L << 32) - Integer.toUnsignedLong(sequence);
        int count = (int) Math.min(Math.min(batchTarget, MAX_BATCH_BLOCKS / per), left);
        int blocks = count * per;
        if (epoch != layoutEpoch || per != layoutPerNonce) {
            layoutEpoch = epoch;
            layoutPerNonce = per;
            layoutBlocks = 0;
        }
        if (blocks > layoutBlocks) {
            // The epoch and block-counter fields depend only on (epoch, blocks per nonce): written once per layout.
            for (int pos = layoutBlocks * 16, b = layoutBlocks % per; pos < blocks * 16; pos += 16) {
                LONG_BE.set(counters, pos, epoch);
                INT_BE.set(counters, pos + 12, oneTimeKeys ? b : b + FIRST_DATA_COUNTER);
                b = b + 1 == per ? 0 : b + 1;
            }
            layoutBlocks = blocks;
        }
        for (int n = 0, pos = 8; n < count; n++) {
            int seq = sequence + n;
            for (int b = 0; b < per; b++, pos += 16) {
                INT_BE.set(counters, pos, seq);
            }
        }
        aes.encryptBlocks(counters, 0, keystream, 0, blocks);
        batchKey = aes;
        batchEpoch = epoch;
        batchFirstSequence = sequence;
        batchCount = count;
        blocksPerNonce = per;
    }

    /** The array holding the located nonce's one-time Poly1305 key at {@link #oneTimeKeyOffset()}. */
    byte[] oneTimeKey() {
        return keystream;
    }

    int oneTimeKeyOffset() {
        return located;
    }

    /**
     * dst = src XOR keystream of the located nonce, for {@code len} bytes from the first data block. {@code src}
     * and {@code dst} may be the same region (in place) but must not otherwise overlap.
     */
    void xor(AesBlockFunction aes, long epoch, int sequence, byte[] src, int srcOff, byte[] dst, int dstOff, int len) {
        xor(aes, epoch, sequence, 0, src, srcOff, dst, dstOff, len);
    }

    /** As {@link #xor}, for data bytes {@code [from, from + len)} of the excerpt; {@code from} a multiple of 16. */
    void xor(AesBlockFunction aes, long epoch, int sequence, int from, byte[] src, int srcOff, byte[] dst, int dstOff,
             int len) {
        int precomputed = (blocksPerNonce - keyBlocks) * 16;
        if (from + len <= precomputed) { // the common case: all of it in the batch
            xor(keystream, located + keyBlocks * 16 + from, src, srcOff, dst, dstOff, len);
            return;
        }
        xor(aes, epoch, sequence, from, src, srcOff, 0L, dst, dstOff, 0L, len, null);
    }

    /**
     * dst = src XOR keystream of the located nonce, for data bytes {@code [from, from + len)} ({@code from} a multiple
     * of 16), where source and destination are each an array at an offset or, when the array is null, native memory
     * at an address: the memory paths' one loop. With a {@code mac} (the one-pass open), {@code len} is a multiple of
     * 16 and each 16-byte block of the source is read once, copied for the mac, and XORed into the destination.
     */
    void xor(AesBlockFunction aes, long epoch, int sequence, int from, byte[] srcArray, int srcOff, long srcAddress,
             byte[] dstArray, int dstOff, long dstAddress, int len, Poly1305 mac) {
        for (int done = 0; done < len; ) {
            int n = segment(aes, epoch, sequence, from + done, len - done);
            byte[] ks = segment;
            int k = segmentOffset - done; // keystream of byte i at ks[k + i]
            int i = done;
            int end = done + n;
            for (; i + 16 <= end; i += 16) {
                long c0 = load(srcArray, srcOff, srcAddress, i);
                long c1 = load(srcArray, srcOff, srcAddress, i + 8);
                if (mac != null) { // the mac reads this private copy: what it checks is what was decrypted
                    LONG_LE.set(macInput, i - done, c0);
                    LONG_LE.set(macInput, i - done + 8, c1);
                }
                store(dstArray, dstOff, dstAddress, i, c0 ^ (long) LONG_LE.get(ks, k + i));
                store(dstArray, dstOff, dstAddress, i + 8, c1 ^ (long) LONG_LE.get(ks, k + i + 8));
            }
            if (mac != null) {
                mac.absorbFull(macInput, 0, n); // n is whole blocks with a mac
            }
            for (; i + 8 <= end; i += 8) { // the last partial block (no mac: it takes whole blocks only)
                store(dstArray, dstOff, dstAddress, i, load(srcArray, srcOff, srcAddress, i) ^ (long) LONG_LE.get(ks, k + i));
            }
            for (; i < end; i++) {
                byte b = srcArray != null ? srcArray[srcOff + i] : NativeMemory.getByte(srcAddress + i);
                b ^= ks[k + i];
                if (dstArray != null) {
                    dstArray[dstOff + i] = b;
                } else {
                    NativeMemory.putByte(dstAddress + i, b);
                }
            }
            done = end;
        }
    }

    private static long load(byte[] array, int off, long address, int i) {
        return array != null ? (long) LONG_LE.get(array, off + i) : NativeMemory.getLongLE(address + i);
    }

    private static void store(byte[] array, int off, long address, int i, long v) {
        if (array != null) {
            LONG_LE.set(array, off + i, v);
        } else {
            NativeMemory.putLongLE(address + i, v);
        }
    }

    /**
     * Makes the keystream of data bytes {@code [from, from + n)} of the located nonce available at
     * {@link #segment}[{@link #segmentOffset} ..]; returns n, at most {@code len}. {@code from} is a multiple of 16.
     * The first blocks come from the batch; later ones are computed here, up to {@link #overflow}'s length a call.
     */
    private int segment(AesBlockFunction aes, long epoch, int sequence, int from, int len) {
        int precomputed = (blocksPerNonce - keyBlocks) * 16;
        if (from < precomputed) {
            segment = keystream;
            segmentOffset = located + keyBlocks * 16 + from;
            return Math.min(len, precomputed - from);
        }
        int n = Math.min(len, overflow.length);
        int blocks = (n + 15) >>> 4;
        int counter = FIRST_DATA_COUNTER + (from >>> 4);
        for (int b = 0, pos = 0; b < blocks; b++, pos += 16, counter++) {
            LONG_BE.set(overflowCounters, pos, epoch);
            INT_BE.set(overflowCounters, pos + 8, sequence);
            INT_BE.set(overflowCounters, pos + 12, counter);
        }
        aes.encryptBlocks(overflowCounters, 0, overflow, 0, blocks);
        segment = overflow;
        segmentOffset = 0;
        return n;
    }

    /** Forgets every precomputed block (on close, or when keys are retired). */
    void wipe() {
        Arrays.fill(keystream, (byte) 0);
        Arrays.fill(overflow, (byte) 0);
        batchKey = null;
        batchCount = 0;
    }

    static void xor(byte[] ks, int ksOff, byte[] src, int srcOff, byte[] dst, int dstOff, int len) {
        int i = 0;
        for (int end = len - 7; i < end; i += 8) {
            long v = (long) LONG_NATIVE.get(src, srcOff + i) ^ (long) LONG_NATIVE.get(ks, ksOff + i);
            LONG_NATIVE.set(dst, dstOff + i, v);
        }
        for (; i < len; i++) {
            dst[dstOff + i] = (byte) (src[srcOff + i] ^ ks[ksOff + i]);
        }
    }
}
