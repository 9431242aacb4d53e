package io.queueenterprise.queue;

import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueStore;

import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Finds the intact excerpts after a damaged excerpt header in one cycle file, where Chronicle cannot: its index
 * holds the position of only every 256th excerpt (FAST_DAILY), so a wrong length word sends its walk into the
 * middle of other bytes and every excerpt up to the next indexed one, or the cycle's end, is out of reach.
 *
 * <p>Excerpt headers form a chain: a 4-byte little-endian word (bit 31 not complete, bit 30 metadata, the rest
 * the length), the next one at the following 4-byte boundary. Chronicle's store header records where the cycle's
 * last excerpt starts ({@code writePosition}). From a position after the damage, each 4-byte boundary is tried as
 * a header; the first one whose chain of well-formed headers reaches exactly that last excerpt, and ends there, is
 * the real chain: a chain started in the middle of other bytes usually meets a malformed header within a step or
 * two. The excerpts on the chain take the cycle's last indexes, counted back from its last one.
 *
 * <p>Not always, though: the last word of a short excerpt is its final bytes and Chronicle's zero padding, a small
 * number, so read as a header it hops a few KiB ahead, and now and then exactly onto a real header after the
 * damage. Such a chain reaches the last excerpt too, and it starts earlier than the real one (about 3 % of the
 * trials with 46-byte excerpts here put "excerpts" of such a chain at the indexes of intact ones). So a chain must
 * also agree with the walk from the anchor, an excerpt known to be real at a known index (the one read last, or one
 * Chronicle's index places): following the lengths from the anchor, the first header at or past the chain's start
 * must not claim an index below the chain's first. A chain that starts inside an intact excerpt's bytes fails this
 * (the walk reaches the next intact excerpt at its true, lower index); the real chain never does, since the walk
 * reaches the damaged header, whose index is the one before the chain's, before the chain starts. On an
 * authenticated queue each envelope's tag also binds its index, so a wrong guess could never be read as data; a
 * plain queue has no such check (docs/library.md).
 *
 * <p>A damage path only: maps the file read-only, allocates, and walks headers, none of it on a healthy read.
 */
final class CycleResync {
    private static final int NOT_COMPLETE = 0x80000000;
    private static final int META_DATA = 0x40000000;
    private static final int LENGTH_MASK = 0x3FFFFFFF;
    /** The excerpts found: indexes {@code firstIndex ..} in order, each one's data at {@code dataPositions[i]}. */
    static final class Found {
        final long firstIndex;
        final long[] dataPositions;
        final int[] lengths;
        final MappedByteBuffer map;

        Found(long firstIndex, long[] dataPositions, int[] lengths, MappedByteBuffer map) {
            this.firstIndex = firstIndex;
            this.dataPositions = dataPositions;
            this.lengths = lengths;
            this.map = map;
        }

        int count() {
            return dataPositions.length;
        }

        long lastIndex() {
            return firstIndex + dataPositions.length - 1;
        }

        /** Where in {@link #dataPositions} {@code index} is, or -1. */
        int slotOf(long index) {
            long slot = index - firstIndex;
            return slot >= 0 && slot < dataPositions.length ? (int) slot : -1;
        }
    }

    private CycleResync() {
    }

    /**
     * The real chain of excerpts in {@code cycle} that starts after {@code from} (a file position inside or after
     * the damage) and holds at most {@code maxCount} excerpts ending at {@code lastIndex} (the cycle's last
     * excerpt); null when there is none to be found (the damage reaches the cycle's end, or the store header
     * itself is damaged). {@code anchorHeader} is the header position of a real excerpt at {@code anchorIndex} before
     * {@code from} that every chain found must agree with (see above), or -1 for none.
     */
    static Found find(SingleChronicleQueue chronicle, int cycle, long from, long lastIndex, long maxCount,
                      long anchorHeader, long anchorIndex) {
        if (maxCount <= 0 || chronicle.rollCycle().toCycle(lastIndex) != cycle) {
            return null;
        }
        long lastHeader;
        SingleChronicleQueueStore store = chronicle.storeForCycle(cycle, chronicle.epoch(), false, null);
        if (store == null) {
            return null;
        }
        try {
            lastHeader = store.writePosition();
        } finally {
            chronicle.closeStore(store);
        }
        Path file = Path.of(CorruptedQueueException.cycleFile(chronicle, chronicle.rollCycle().toIndex(cycle, 0)));
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = Math.min(channel.size(), Integer.MAX_VALUE);
            MappedByteBuffer map = channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
            map.order(ByteOrder.LITTLE_ENDIAN);
            return lastHeader < size - 4 && anchorHeader < lastHeader
                    ? search(map, align(from), lastHeader, lastIndex, maxCount, anchorHeader, anchorIndex) : null;
        } catch (IOException | RuntimeException e) {
            return null; // nothing more to be found than Chronicle found
        }
    }

    private static Found search(MappedByteBuffer map, long from, long lastHeader, long lastIndex, long maxCount,
                                long anchorHeader, long anchorIndex) {
        // A chain that failed fails again from any header it passed: remembering them keeps the search linear. A
        // chain the anchor contradicts is not marked: past the point where it joined the real chain, it IS the real one.
        java.util.BitSet dead = new java.util.BitSet();
        for (long start = from; start <= lastHeader; start += 4) {
            int count = countChain(map, (int) start, (int) from, (int) lastHeader, maxCount, dead);
            if (count > 0 && (anchorHeader < 0
                    || !anchorContradicts(map, (int) anchorHeader, anchorIndex, (int) start, (int) lastHeader, lastIndex - count + 1))) {
                return collect(map, (int) start, count, lastIndex);
            }
        }
        return null;
    }

    /**
     * Whether the walk from the anchor (a real excerpt's header at {@code anchorIndex}) along the length words says
     * the chain starting at {@code start} cannot begin with {@code firstIndex}: the walk's first header at or past
     * {@code start} would be excerpt {@code anchorIndex + k + 1} (after k more data excerpts), and a chain whose first
     * excerpt comes later than that claims excerpts the walk found after its start. A walk that breaks (a malformed
     * header, or a length leading past the cycle's last excerpt: the damage sent it astray) says nothing.
     */
    private static boolean anchorContradicts(MappedByteBuffer map, int anchorHeader, long anchorIndex, int start,
                                             int lastHeader, long firstIndex) {
        int position = anchorHeader;
        long index = anchorIndex; // the last data excerpt the walk passed
        while (position < start) {
            int header = map.getInt(position);
            int length = header & LENGTH_MASK;
            if (header == 0 || (header & NOT_COMPLETE) != 0 || length == 0) {
                return false;
            }
            long next = align((long) position + 4 + length);
            if (next > lastHeader) {
                return false;
            }
            position = (int) next;
            if (position < start && (map.getInt(position) & META_DATA) == 0) {
                index++;
            }
        }
        return index + 1 < firstIndex;
    }

    /** Data excerpts on the chain from {@code start} if it reaches {@code lastHeader} and ends there, else -1. */
    private static int countChain(MappedByteBuffer map, int start, int from, int lastHeader, long maxCount,
                                  java.util.BitSet dead) {
        int position = start;
        int count = 0;
        int result = -1;
        while (position <= lastHeader && !dead.get((position - from) >> 2)) {
            int header = map.getInt(position);
            if (header == 0 || (header & NOT_COMPLETE) != 0) {
                break; // the chain ends before the cycle's last excerpt
            }
            int length = header & LENGTH_MASK;
            long next = align((long) position + 4 + length);
            if (length == 0 || next + 4 > map.limit()) {
                break;
            }
            if ((header & META_DATA) == 0 && ++count > maxCount) {
                return -1; // too many: not dead for a chain that starts later
            }
            if (position == lastHeader) {
                int after = map.getInt((int) next);
                boolean ends = after == 0 || (after & NOT_COMPLETE) != 0; // nothing after it, or a write under way
                result = ends && (header & META_DATA) == 0 ? count : -1;
                break;
            }
            position = (int) next;
        }
        if (result < 0) {
            for (int p = start; p <= position && p <= lastHeader; ) { // mark the failed chain's headers, its last too
                dead.set((p - from) >> 2);
                int length = map.getInt(p) & LENGTH_MASK;
                p = (int) align((long) p + 4 + length);
            }
        }
        return result;
    }

    private static Found collect(MappedByteBuffer map, int start, int count, long lastIndex) {
        long[] positions = new long[count];
        int[] lengths = new int[count];
        int position = start;
        int i = 0;
        while (i < count) {
            int header = map.getInt(position);
            int length = header & LENGTH_MASK;
            if ((header & META_DATA) == 0) {
                positions[i] = position + 4;
                lengths[i] = length;
                i++;
            }
            position = (int) align((long) position + 4 + length);
        }
        return new Found(lastIndex - count + 1, positions, lengths, map);
    }

    private static long align(long position) {
        return (position + 3) & ~3L;
    }
}
