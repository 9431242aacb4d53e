package io.queueenterprise.queue;

import net.openhft.chronicle.core.values.LongValue;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * What the queue records about its writes OUTSIDE the cycle files, so that a reader can tell the end of the queue
 * from excerpts that were written and are gone (a truncated or deleted cycle file):
 * <ul>
 * <li>the <b>high-water mark</b>: the highest index any appender completed, in Chronicle's metadata store
 *     ({@code metadata.cq4t}, mapped by every process). Raised after the write completes (never before: a reader
 *     that sees it may rely on every index up to it being complete), by one ordered store on mapped memory;</li>
 * <li>the <b>cycle log</b>: {@value #CYCLE_LOG} beside the cycle files, a 4-byte big-endian cycle number appended
 *     when an appender first writes in a cycle (once per cycle and appender: off the steady-state path).</li>
 * </ul>
 * Writers that do not go through this library (open-source Chronicle on a plain queue) record nothing: the marks
 * then lag, which hides nothing but finds less.
 */
final class WrittenMarks {
    static final String HIGH_WATER_KEY = "queue-enterprise.high-water-index";
    static final String CYCLE_LOG = "queue-enterprise.cycles";
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(WrittenMarks.class);
    private static final int[] NO_CYCLES = new int[0];

    private WrittenMarks() {
    }

    /** The high-water mark of a writable queue (created at -1 if absent). */
    static LongValue highWater(SingleChronicleQueue chronicle) {
        return chronicle.metaStore().acquireValueFor(HIGH_WATER_KEY, -1);
    }

    /** The high-water mark for a reader: null when none was ever recorded (a read-only store cannot add it). */
    static LongValue highWaterIfRecorded(SingleChronicleQueue chronicle, boolean readOnly) {
        try {
            if (chronicle.tableStoreGet(HIGH_WATER_KEY) == Long.MIN_VALUE) {
                return readOnly ? null : highWater(chronicle);
            }
            return highWater(chronicle);
        } catch (RuntimeException e) { // a metadata store that cannot be read: detect less, read on
            return null;
        }
    }

    /** Per appender: raises the high-water mark and logs each new cycle it writes in. One thread. */
    static final class Writer {
        private final LongValue highWater;
        private final RollCycle rollCycle;
        private final Path cycleLog;
        private int lastCycle = Integer.MIN_VALUE;

        Writer(SingleChronicleQueue chronicle) {
            this.highWater = highWater(chronicle);
            this.rollCycle = chronicle.rollCycle();
            this.cycleLog = Path.of(chronicle.fileAbsolutePath(), CYCLE_LOG);
        }

        /**
         * The excerpt at {@code index} is complete. A racy maximum, not a compare-and-set loop: writers racing (one
         * descheduled between its load and its store) may leave the mark below the highest index written, which
         * hides nothing (every index up to the mark is still complete) and finds less until the next write; an ordered store after a volatile load
         * costs no lock-prefixed instruction on the append path.
         */
        void written(long index) {
            if (index > highWater.getVolatileValue()) {
                highWater.setOrderedValue(index);
            }
            int cycle = rollCycle.toCycle(index);
            if (cycle != lastCycle) {
                logCycle(cycle);
                lastCycle = cycle;
            }
        }

        private void logCycle(int cycle) {
            // O_APPEND: records of several writers (processes too) never overwrite each other; repeats are harmless.
            try (FileChannel log = FileChannel.open(cycleLog, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                    StandardOpenOption.WRITE)) {
                log.write(ByteBuffer.allocate(Integer.BYTES).putInt(0, cycle));
            } catch (java.io.IOException e) {
                // The excerpt is written; only a later deletion of this cycle's file could go unnoticed.
                LOG.warn("cannot record cycle {} in {}: {}", cycle, cycleLog, e.toString());
            }
        }
    }

    /** The cycles recorded in {@code dir}'s cycle log, sorted, without repeats (empty when there is no log). */
    static int[] loggedCycles(Path dir) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(dir.resolve(CYCLE_LOG));
        } catch (NoSuchFileException e) {
            return NO_CYCLES;
        } catch (java.io.IOException e) {
            LOG.warn("cannot read {}: {}", dir.resolve(CYCLE_LOG), e.toString());
            return NO_CYCLES;
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        int[] cycles = new int[bytes.length / Integer.BYTES];
        for (int i = 0; i < cycles.length; i++) {
            cycles[i] = buffer.getInt();
        }
        return Arrays.stream(cycles).sorted().distinct().toArray();
    }

    /** Per queue, for its tailers: what the marks say, and which logged cycles have lost their file. */
    static final class Reader {
        private static final long NONE = -1;
        private final SingleChronicleQueue chronicle;
        private final LongValue highWater; // null: never recorded here
        private final Path dir;
        /** Cycle files found cut short at open; null (the usual case) when none was. */
        final CutFiles cutFiles;

        Reader(SingleChronicleQueue chronicle, boolean readOnly, CutFiles cutFiles) {
            this.chronicle = chronicle;
            this.cutFiles = cutFiles;
            this.highWater = highWaterIfRecorded(chronicle, readOnly);
            this.dir = Path.of(chronicle.fileAbsolutePath());
        }

        /** The highest index recorded as completed, -1 if none. One volatile read of mapped memory. */
        long highWater() {
            return highWater == null ? NONE : highWater.getVolatileValue(NONE);
        }

        /** The cycles logged as written, strictly between {@code from} and {@code to}, whose cycle file is gone. */
        int[] missingCyclesBetween(int from, int to) {
            return Arrays.stream(loggedCycles(dir)).filter(c -> c > from && c < to)
                    .filter(c -> !Files.exists(Path.of(cycleFile(c)))).toArray();
        }

        /** The first index of the next cycle file after {@code cycle}, or -1 when there is none. */
        long firstIndexAfterCycle(int cycle) {
            try {
                int next = chronicle.nextCycle(cycle, net.openhft.chronicle.queue.TailerDirection.FORWARD);
                return next > cycle ? chronicle.rollCycle().toIndex(next, 0) : NONE;
            } catch (java.text.ParseException | RuntimeException e) {
                return NONE;
            }
        }

        String cycleFile(int cycle) {
            return CorruptedQueueException.cycleFile(chronicle, chronicle.rollCycle().toIndex(cycle, 0));
        }
    }

    /**
     * Cycle files found cut short when the queue was opened: shorter than where their own store header says the
     * last excerpt starts. Sizes are taken BEFORE Chronicle maps the files (a writable open extends a mapped file
     * back to its chunk size with zeros, and the evidence with it); only sizes that are not whole pages are looked
     * at closely (Chronicle sizes its files in whole chunks). Kept for this open only: a later writable open no
     * longer sees the cut, but the high-water mark still reports the excerpts after it lost.
     */
    static final class CutFiles {
        private static final long PAGE = 4096;
        private final int[] cycles;
        private final long[] lengths;

        private CutFiles(int[] cycles, long[] lengths) {
            this.cycles = cycles;
            this.lengths = lengths;
        }

        /** The cycle files' sizes now, for {@link #of}: only the ones of a size Chronicle never gives a file. */
        static java.util.Map<Path, Long> oddSizes(Path dir) {
            java.util.Map<Path, Long> odd = new java.util.HashMap<>();
            try (java.util.stream.Stream<Path> files = Files.list(dir)) {
                files.filter(p -> p.getFileName().toString().endsWith(".cq4")).forEach(p -> {
                    try {
                        long size = Files.size(p);
                        if (size % PAGE != 0) {
                            odd.put(p.toAbsolutePath().normalize(), size);
                        }
                    } catch (java.io.IOException gone) {
                        // listed and gone: nothing to say about it
                    }
                });
            } catch (java.io.IOException | java.io.UncheckedIOException e) {
                return odd;
            }
            return odd;
        }

        static CutFiles of(SingleChronicleQueue chronicle, java.util.Map<Path, Long> oddSizes) {
            if (oddSizes.isEmpty()) {
                return null;
            }
            RollCycle rollCycle = chronicle.rollCycle();
            java.util.List<Integer> cut = new java.util.ArrayList<>();
            java.util.List<Long> lengths = new java.util.ArrayList<>();
            for (long cycle : chronicle.listCyclesBetween(chronicle.firstCycle(), chronicle.lastCycle())) {
                Path file = Path.of(CorruptedQueueException.cycleFile(chronicle, rollCycle.toIndex((int) cycle, 0)));
                Long size = oddSizes.get(file.toAbsolutePath().normalize());
                if (size != null && lastHeader(chronicle, (int) cycle) + 4 > size) {
                    cut.add((int) cycle);
                    lengths.add(size);
                }
            }
            return cut.isEmpty() ? null : new CutFiles(cut.stream().mapToInt(Integer::intValue).toArray(),
                    lengths.stream().mapToLong(Long::longValue).toArray());
        }

        private static long lastHeader(SingleChronicleQueue chronicle, int cycle) {
            try {
                net.openhft.chronicle.queue.impl.single.SingleChronicleQueueStore store =
                        chronicle.storeForCycle(cycle, chronicle.epoch(), false, null);
                if (store == null) {
                    return -1;
                }
                try {
                    return store.writePosition();
                } finally {
                    chronicle.closeStore(store);
                }
            } catch (RuntimeException | Error damaged) {
                return -1;
            }
        }

        /** Where {@code cycle}'s file was cut, or -1 if it was not. */
        long cutAt(int cycle) {
            for (int i = 0; i < cycles.length; i++) {
                if (cycles[i] == cycle) {
                    return lengths[i];
                }
            }
            return -1;
        }
    }
}
