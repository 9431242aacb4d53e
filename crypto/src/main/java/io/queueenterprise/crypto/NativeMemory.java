package io.queueenterprise.crypto;

import sun.misc.Unsafe;

import java.lang.reflect.Field;
import java.nio.ByteOrder;

/**
 * Reads and writes native memory by address: an excerpt in a memory-mapped queue file for the one-pass open,
 * the queue library's direct staging buffer for the CTR seal. The callers' contract: the range is readable (or
 * writable) and stays mapped for the duration of the call; nothing here can check that, so only
 * {@link ExcerptOpener#openFromMemory} and {@link ExcerptSealer#sealToMemory} use it, over ranges the queue library
 * took from Chronicle.
 *
 * <p>{@code sun.misc.Unsafe} (module jdk.unsupported) with a null base object: C2 compiles such accesses to plain
 * loads. Words are returned little-endian, as the envelope defines them, on any platform.
 */
final class NativeMemory {
    private static final Unsafe UNSAFE = unsafe();
    private static final boolean BIG_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN;

    private NativeMemory() {
    }

    static long getLongLE(long address) {
        long v = UNSAFE.getLong(address);
        return BIG_ENDIAN ? Long.reverseBytes(v) : v;
    }

    static byte getByte(long address) {
        return UNSAFE.getByte(address);
    }

    static void putLongLE(long address, long value) {
        UNSAFE.putLong(address, BIG_ENDIAN ? Long.reverseBytes(value) : value);
    }

    static void putByte(long address, byte value) {
        UNSAFE.putByte(address, value);
    }

    static void zero(long address, int length) {
        UNSAFE.setMemory(address, length, (byte) 0);
    }

    private static Unsafe unsafe() {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            return (Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
