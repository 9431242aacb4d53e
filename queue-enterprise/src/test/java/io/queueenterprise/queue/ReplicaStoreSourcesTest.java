package io.queueenterprise.queue;

import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replica store writes the caller's bytes where they lie (native memory: a follower's ring, a client frame in
 * Aeron's buffer; an array at an offset), with no scratch copy of its own: what lands in the queue is exactly the
 * given range, also when the caller switches arrays or reuses memory between writes.
 */
@Tag("unit")
class ReplicaStoreSourcesTest {
    @TempDir
    Path dir;

    @Test
    void writesAtAnIndexFromNativeMemoryAndFromArrays() {
        BytesStore<?, Void> memory = BytesStore.nativeStoreWithFixedCapacity(4096);
        long address = memory.addressForRead(0);
        try (ReplicaStore store = ReplicaStore.open(dir.resolve("q"), RollCycles.FAST_DAILY)) {
            long first = RollCycles.FAST_DAILY.toIndex(RollCycles.FAST_DAILY.current(System::currentTimeMillis, 0), 0);
            byte[][] expected = new byte[6][];
            for (int i = 0; i < 3; i++) {
                byte[] bytes = pattern(100 + i, i);
                memory.write(64L * i, bytes);
                store.writeAt(first + i, address + 64L * i, bytes.length); // same memory, different ranges
                expected[i] = bytes;
            }
            byte[] a = pattern(300, 50);
            byte[] b = pattern(200, 90);
            store.writeAt(first + 3, a, 7, 40);
            store.writeAt(first + 4, b, 0, 200); // another array: the view must follow it
            store.writeAt(first + 5, a, 0, 300);
            expected[3] = Arrays.copyOfRange(a, 7, 47);
            expected[4] = b;
            expected[5] = a;
            assertEquals(first + 5, store.lastIndex());
            assertContent(store, first, expected);
        } finally {
            memory.releaseLast();
        }
    }

    @Test
    void appendsFromNativeMemory() {
        BytesStore<?, Void> memory = BytesStore.nativeStoreWithFixedCapacity(1024);
        long address = memory.addressForRead(0);
        try (ReplicaStore store = ReplicaStore.open(dir.resolve("q"), RollCycles.FAST_DAILY)) {
            byte[] one = pattern(33, 1);
            memory.write(0, one);
            long index = store.append(address, one.length);
            byte[] two = pattern(500, 2);
            memory.write(0, two);
            long next = store.append(address, two.length);
            byte[] three = pattern(10, 3);
            long last = store.append(three, 0, three.length);
            assertEquals(index + 1, next);
            assertEquals(next + 1, last);
            assertContent(store, index, new byte[][]{one, two, three});
        } finally {
            memory.releaseLast();
        }
    }

    private static void assertContent(ReplicaStore store, long first, byte[][] expected) {
        try (ReplicaStore.RawTailer tailer = store.rawTailer()) {
            assertTrue(tailer.moveTo(first));
            for (byte[] e : expected) {
                int length = tailer.next();
                assertEquals(e.length, length);
                assertArrayEquals(e, Arrays.copyOf(tailer.bytes(), length));
            }
            assertEquals(-1, tailer.next());
        }
    }

    private static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (seed * 31 + i);
        }
        return b;
    }
}
