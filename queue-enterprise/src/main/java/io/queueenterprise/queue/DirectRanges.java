package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.core.UnsafeMemory;

import java.util.Objects;

/**
 * Where a range of Chronicle {@link Bytes} is one contiguous region of native memory (a mapped excerpt, a direct
 * buffer), and its address: the encrypted paths seal and open straight in such ranges. Anything else (heap bytes,
 * a range crossing a mapped chunk's safe limit or the write limit) answers 0, and the caller takes the copying way.
 *
 * <p>Also the heap-to-native copy: Chronicle (Bytes 2026.4, Core 2026.5) copies a heap array into native memory with
 * a Java loop of 16-byte {@code Unsafe} gets and puts whose base object may be null, which C2 compiles
 * conservatively ({@code qe ratios}: chronicle-raw-heap against chronicle-raw, about 65 ns more per 40-byte excerpt
 * and 500 ns more per 256-byte one here); {@link #append} uses the JDK's {@code Unsafe.copyMemory} intrinsic through
 * Chronicle's own {@code Unsafe} instance instead.
 */
final class DirectRanges {
    private static final long BYTE_ARRAY_BASE = UnsafeMemory.UNSAFE.arrayBaseOffset(byte[].class);

    private DirectRanges() {
    }

    /** The native address of {@code bytes[position .. position+length)} if it is one contiguous region, else 0. */
    static long readable(BytesStore<?, ?> bytes, long position, long length) {
        BytesStore<?, ?> store = bytes instanceof Bytes ? ((Bytes<?>) bytes).bytesStore() : bytes;
        return store != null && store.isDirectMemory() && store.inside(position, length) ? store.addressForRead(position) : 0;
    }

    /**
     * The native address of the next {@code length} bytes at {@code dst}'s write position if they are (or, for an
     * elastic direct buffer, now become) one contiguous region, else 0. The write position does not move.
     */
    static long writable(Bytes<?> dst, long length) {
        long position = dst.writePosition();
        if (!dst.isDirectMemory() || position + length > dst.writeLimit()) {
            return 0;
        }
        dst.ensureCapacity(position + length); // an elastic buffer grows here, before anything is written
        BytesStore<?, ?> store = dst.bytesStore();
        return store != null && store.isDirectMemory() && store.inside(position, length) ? store.addressForWrite(position) : 0;
    }

    /** Writes {@code src[off .. off+len)} at {@code dst}'s write position and advances it, like {@code dst.write(src, off, len)}. */
    static void append(Bytes<?> dst, byte[] src, int off, int len) {
        Objects.checkFromIndexSize(off, len, src.length);
        long address = writable(dst, len);
        if (address != 0) {
            UnsafeMemory.UNSAFE.copyMemory(src, BYTE_ARRAY_BASE + off, null, address, len);
            dst.writeSkip(len);
        } else {
            dst.write(src, off, len);
        }
    }
}
