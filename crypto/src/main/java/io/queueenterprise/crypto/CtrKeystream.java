package io.queueenterprise.crypto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * AES counter mode over reusable, bounded buffers. Counter block = hi (8 bytes, big-endian) || mid
 * (4 bytes, big-endian) || block counter (4 bytes, big-endian); only the low 32 bits count. For excerpts
 * hi = excerpt index, mid = salt, counter 0 = Poly1305 pad, keystream from counter 1.
 *
 * <p>Use: {@link #begin} (computes the optional pad block and the first chunk of keystream in one AES call),
 * then {@link #finish} (XORs the whole keystream into the payload). Single-threaded, allocation-free.
 */
final class CtrKeystream {
    /** Keystream blocks generated per AES call: 4 KiB of keystream, plus one slot for the pad block. */
    static final int CHUNK_BLOCKS = 256;
    static final int CHUNK_BYTES = CHUNK_BLOCKS * 16;

    private static final VarHandle LONG_BE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT_BE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG_NATIVE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final byte[] counters = new byte[(CHUNK_BLOCKS + 1) * 16];
    private final byte[] keystream = new byte[(CHUNK_BLOCKS + 1) * 16];
    /** Bytes of keystream for the first chunk sitting in {@code keystream} at offset {@link #ksOff}. */
    private int firstChunkBytes;
    private int ksOff;

    /**
     * Computes, in one AES call, the pad block AES(hi||mid||firstCounter-1) into {@code pad[0..16)} when
     * {@code pad != null}, and the keystream for the first min(len, 4 KiB) bytes starting at {@code firstCounter}.
     */
    void begin(AesBlockFunction aes, long hi, int mid, int firstCounter, int len, byte[] pad) {
        if (((long) len + 15) / 16 > (1L << 32) - 2) {
            throw new IllegalArgumentException("payload exceeds the counter-mode limit of (2^32-2)*16 bytes");
        }
        int first = Math.min(len, CHUNK_BYTES);
        int blocks = (first + 15) >>> 4;
        int counter = firstCounter;
        int pos = 0;
        if (pad != null) {
            counter--;
            blocks++;
        }
        for (int i = 0; i < blocks; i++, pos += 16, counter++) {
            LONG_BE.set(counters, pos, hi);
            INT_BE.set(counters, pos + 8, mid);
            INT_BE.set(counters, pos + 12, counter);
        }
        if (blocks > 0) {
            aes.encryptBlocks(counters, 0, keystream, 0, blocks);
        }
        if (pad != null) {
            System.arraycopy(keystream, 0, pad, 0, 16);
            ksOff = 16;
        } else {
            ksOff = 0;
        }
        firstChunkBytes = first;
    }

    /** XORs keystream into {@code buf[off .. off+len)}; {@code len} and the counter inputs must match {@link #begin}. */
    void finish(AesBlockFunction aes, long hi, int mid, int firstCounter, byte[] buf, int off, int len) {
        xor(keystream, ksOff, buf, off, firstChunkBytes);
        int done = firstChunkBytes;
        int counter = firstCounter + (done >>> 4);
        while (done < len) {
            int n = Math.min(len - done, CHUNK_BYTES);
            int blocks = (n + 15) >>> 4;
            int pos = 0;
            for (int i = 0; i < blocks; i++, pos += 16, counter++) {
                LONG_BE.set(counters, pos, hi);
                INT_BE.set(counters, pos + 8, mid);
                INT_BE.set(counters, pos + 12, counter);
            }
            aes.encryptBlocks(counters, 0, keystream, 0, blocks);
            xor(keystream, 0, buf, off + done, n);
            done += n;
        }
    }

    /** Zeroes the keystream buffer (used when authentication fails, before throwing). */
    void wipe() {
        Arrays.fill(keystream, (byte) 0);
    }

    static void xor(byte[] ks, int ksOff, byte[] buf, int off, int len) {
        int i = 0;
        for (int end = len - 7; i < end; i += 8) {
            long v = (long) LONG_NATIVE.get(buf, off + i) ^ (long) LONG_NATIVE.get(ks, ksOff + i);
            LONG_NATIVE.set(buf, off + i, v);
        }
        for (; i < len; i++) {
            buf[off + i] ^= ks[ksOff + i];
        }
    }
}
