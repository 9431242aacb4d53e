package io.queueenterprise.crypto;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteOrder;

/**
 * Reads and writes native memory by address: an excerpt in a memory-mapped queue file for the one-pass open, the
 * queue library's direct staging buffer for the CTR seal. The callers' contract: the range is readable (or
 * writable) and stays mapped for the duration of the call; nothing here can check that, so only
 * {@link ExcerptOpener#openFromMemory} and {@link ExcerptSealer#sealToMemory} use it, over ranges the queue library
 * took from Chronicle (and the tests, over memory they allocate here).
 *
 * <p>{@code sun.misc.Unsafe} (module jdk.unsupported) reached through constant method handles, which C2 inlines
 * down to the same plain loads and stores as a direct call, without naming the proprietary type in our source.
 * Words are little-endian, as the envelope defines them, on any platform.
 */
final class NativeMemory {
    private static final boolean BIG_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN;
    private static final MethodHandle GET_LONG;
    private static final MethodHandle PUT_LONG;
    private static final MethodHandle GET_BYTE;
    private static final MethodHandle PUT_BYTE;
    private static final MethodHandle SET_MEMORY;
    private static final MethodHandle COPY_MEMORY;
    private static final MethodHandle ALLOCATE;
    private static final MethodHandle FREE;
    private static final long BYTE_ARRAY_BASE;

    static {
        try {
            Class<?> type = Class.forName("sun.misc.Unsafe");
            Field instance = type.getDeclaredField("theUnsafe");
            instance.setAccessible(true);
            Object unsafe = instance.get(null);
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            GET_LONG = bound(lookup, type, unsafe, "getLong", long.class, long.class);
            PUT_LONG = bound(lookup, type, unsafe, "putLong", void.class, long.class, long.class);
            GET_BYTE = bound(lookup, type, unsafe, "getByte", byte.class, long.class);
            PUT_BYTE = bound(lookup, type, unsafe, "putByte", void.class, long.class, byte.class);
            SET_MEMORY = bound(lookup, type, unsafe, "setMemory", void.class, long.class, long.class, byte.class);
            COPY_MEMORY = bound(lookup, type, unsafe, "copyMemory", void.class, Object.class, long.class, Object.class,
                    long.class, long.class);
            ALLOCATE = bound(lookup, type, unsafe, "allocateMemory", long.class, long.class);
            FREE = bound(lookup, type, unsafe, "freeMemory", void.class, long.class);
            BYTE_ARRAY_BASE = (int) bound(lookup, type, unsafe, "arrayBaseOffset", int.class, Class.class)
                    .invokeExact((Class<?>) byte[].class);
        } catch (Throwable e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private NativeMemory() {
    }

    static long getLongLE(long address) {
        try {
            long v = (long) GET_LONG.invokeExact(address);
            return BIG_ENDIAN ? Long.reverseBytes(v) : v;
        } catch (Throwable e) {
            throw rethrow(e);
        }
    }

    static void putLongLE(long address, long value) {
        try {
            PUT_LONG.invokeExact(address, BIG_ENDIAN ? Long.reverseBytes(value) : value);
        } catch (Throwable e) {
            throw rethrow(e);
        }
    }

    static byte getByte(long address) {
        try {
            return (byte) GET_BYTE.invokeExact(address);
        } catch (Throwable e) {
            throw rethrow(e);
        }
    }

    static void putByte(long address, byte value) {
        try {
            PUT_BYTE.invokeExact(address, value);
        } catch (Throwable e) {
            throw rethrow(e);
        }
    }

    static void zero(long address, int length) {
        try {
            SET_MEMORY.invokeExact(address, (long) length, (byte) 0);
        } catch (Throwable e) {
            throw rethrow(e);
        }
    }

    /** Tests: native memory of {@code bytes} bytes; free it with {@link #free}. */
    static long allocate(long bytes) {
        try {
            return (long) ALLOCATE.invokeExact(bytes);
        } catch (Throwable e) {
            throw rethrow(e);
        }
    }

    static void free(long address) {
        try {
            FREE.invokeExact(address);
        } catch (Throwable e) {
            throw rethrow(e);
        }
    }

    /** Tests: copies {@code src[off .. off+len)} to {@code address}. */
    static void copy(byte[] src, int off, long address, int len) {
        java.util.Objects.checkFromIndexSize(off, len, src.length);
        try {
            COPY_MEMORY.invokeExact((Object) src, BYTE_ARRAY_BASE + off, (Object) null, address, (long) len);
        } catch (Throwable e) {
            throw rethrow(e);
        }
    }

    /** Tests: copies {@code len} bytes at {@code address} to {@code dst[off ..]}. */
    static void copy(long address, byte[] dst, int off, int len) {
        java.util.Objects.checkFromIndexSize(off, len, dst.length);
        try {
            COPY_MEMORY.invokeExact((Object) null, address, (Object) dst, BYTE_ARRAY_BASE + off, (long) len);
        } catch (Throwable e) {
            throw rethrow(e);
        }
    }

    private static MethodHandle bound(MethodHandles.Lookup lookup, Class<?> type, Object unsafe, String name,
                                      Class<?> returns, Class<?>... parameters) throws ReflectiveOperationException {
        return lookup.findVirtual(type, name, MethodType.methodType(returns, parameters)).bindTo(unsafe);
    }

    private static RuntimeException rethrow(Throwable e) {
        if (e instanceof RuntimeException) {
            return (RuntimeException) e;
        }
        if (e instanceof Error) {
            throw (Error) e;
        }
        return new IllegalStateException(e);
    }
}
