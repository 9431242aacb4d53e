package io.queueenterprise.replication.engine;

import io.queueenterprise.queue.ReplicaStore;

import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * A follower's record of what it stored: the CRC32C of every excerpt it wrote, by index, in
 * {@value #FILE_NAME} beside the cycle files (records of i64 index, i32 CRC32C, big-endian, indexes increasing).
 * Chronicle keeps no checksum, so bytes changed on disk would otherwise be served and acknowledged as good; the
 * node checks every recorded excerpt when it opens the queue ({@link #verify}) and reports the first that differs.
 *
 * <p>Cost on the write path: one CRC32C (intrinsified) per excerpt and a 12-byte put into a direct buffer; the buffer
 * goes to the file when full or at most every {@link #FLUSH_NANOS} (one {@code write} call, no fsync), so a killed
 * node loses at most that long's records: those excerpts are then not checked, never reported wrongly. Used by the
 * queue's {@link QueueWriter} thread, and by the duty thread only while that writer is idle (see there).
 */
final class ExcerptChecksums implements AutoCloseable {
    static final String FILE_NAME = "replica-checksums.bin";
    static final long FLUSH_NANOS = 100_000_000L;
    private static final int RECORD_LENGTH = 12;

    private final Path file;
    private final FileChannel channel;
    private final ByteBuffer pending = ByteBuffer.allocateDirect(RECORD_LENGTH * 4096);
    private final CRC32C crc = new CRC32C();
    private long lastRecorded = -1;
    private long lastFlushNanos;

    private ExcerptChecksums(Path file, FileChannel channel) {
        this.file = file;
        this.channel = channel;
    }

    static ExcerptChecksums open(Path queueDirectory) {
        Path file = queueDirectory.resolve(FILE_NAME);
        try {
            FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.READ);
            long whole = channel.size() - channel.size() % RECORD_LENGTH; // a record cut by a kill is dropped
            channel.truncate(whole);
            channel.position(whole);
            ExcerptChecksums checksums = new ExcerptChecksums(file, channel);
            if (whole > 0) {
                ByteBuffer last = ByteBuffer.allocate(8);
                channel.read(last, whole - RECORD_LENGTH);
                checksums.lastRecorded = last.getLong(0);
            }
            return checksums;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open " + file, e);
        }
    }

    /**
     * Records the checksum of the excerpt just stored at {@code index}: {@code bytes}' remaining bytes, read in place
     * (a direct buffer's memory, a heap buffer's array).
     */
    void record(long index, ByteBuffer bytes) {
        if (index <= lastRecorded) {
            return; // never after a rebuild: the records stay increasing
        }
        crc.reset();
        crc.update(bytes);
        if (!pending.hasRemaining()) {
            flush();
        }
        pending.putLong(index).putInt((int) crc.getValue());
        lastRecorded = index;
    }

    /** Writes buffered records when {@link #FLUSH_NANOS} passed since the last write. */
    int flushIfDue(long nowNanos) {
        if (pending.position() == 0 || nowNanos - lastFlushNanos < FLUSH_NANOS) {
            return 0;
        }
        lastFlushNanos = nowNanos;
        flush();
        return 1;
    }

    void flush() {
        pending.flip();
        try {
            while (pending.hasRemaining()) {
                channel.write(pending);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        } finally {
            pending.clear();
        }
    }

    @Override
    public void close() {
        try {
            flush();
        } finally {
            try {
                channel.close();
            } catch (IOException e) {
                LoggerFactory.getLogger(ExcerptChecksums.class).warn("closing " + file + ": " + e);
            }
        }
    }

    /**
     * The first damage found: one line naming it, and the index of the last excerpt before it that was read whole
     * and, where recorded, matched (-1: none), up to which the copy can be kept.
     */
    record Damage(String message, long lastGoodIndex) {
    }

    /**
     * Reads every excerpt of {@code store}, compares those that have a recorded checksum, and checks that the copy
     * holds everything written into it: no cycle file logged as written is gone from between two it holds, and it
     * reaches its high-water mark (a cycle file cut short, or the last ones deleted, do not). Returns null when all
     * is well, else the first problem (or why the queue could not be read). A full sequential read of the queue:
     * done once when the node opens it.
     */
    static Damage verify(ReplicaStore store, Path queueDirectory) {
        Path file = queueDirectory.resolve(FILE_NAME);
        // Read BEFORE the copy: whatever it says was complete before the read began (an appender may be writing).
        long highWater = store.highWaterMark();
        CRC32C crc = new CRC32C();
        long checked = 0;
        long lastGood = -1;
        try (InputStream raw = Files.exists(file) ? Files.newInputStream(file) : InputStream.nullInputStream();
             DataInputStream records = new DataInputStream(new BufferedInputStream(raw, 1 << 16));
             ReplicaStore.RawTailer tailer = store.rawTailer()) {
            tailer.toStart();
            long recordIndex;
            int recordCrc;
            try {
                recordIndex = records.readLong();
                recordCrc = records.readInt();
            } catch (EOFException none) {
                recordIndex = Long.MAX_VALUE; // nothing recorded: only what was written is checked
                recordCrc = 0;
            }
            int length;
            while ((length = tailer.next()) >= 0) {
                long index = tailer.index();
                if (lastGood >= 0) {
                    java.util.List<String> gone = store.missingCycleFilesBetween(lastGood, index);
                    if (!gone.isEmpty()) {
                        return new Damage("cycle file" + (gone.size() > 1 ? "s " : " ") + String.join(", ", gone)
                                + ", logged as written, " + (gone.size() > 1 ? "are" : "is") + " gone: the excerpts between 0x"
                                + Long.toHexString(lastGood) + " and 0x" + Long.toHexString(index) + " are missing from this copy",
                                lastGood);
                    }
                }
                while (recordIndex < index) { // a record of an excerpt no longer held (deleted by retention)
                    try {
                        recordIndex = records.readLong();
                        recordCrc = records.readInt();
                    } catch (EOFException end) {
                        recordIndex = Long.MAX_VALUE;
                    }
                }
                if (recordIndex == index) {
                    crc.reset();
                    crc.update(tailer.bytes(), 0, length);
                    if ((int) crc.getValue() != recordCrc) {
                        return new Damage("stored excerpt 0x" + Long.toHexString(index) + " (" + length + " bytes) does not"
                                + " match the CRC32C recorded when it was written (" + checked + " excerpts before it matched):"
                                + " the cycle file was changed on disk", lastGood);
                    }
                    checked++;
                }
                lastGood = index;
            }
            if (highWater > lastGood) {
                return new Damage("this copy ends at " + (lastGood < 0 ? "nothing" : "0x" + Long.toHexString(lastGood))
                        + " but excerpts up to 0x" + Long.toHexString(highWater) + " were stored in it (its high-water mark):"
                        + " a cycle file was cut short or lost", lastGood);
            }
            return null;
        } catch (IOException e) {
            return new Damage("cannot read " + file + ": " + e, -1);
        } catch (RuntimeException e) { // Chronicle cannot read a damaged cycle file
            return new Damage("cannot read the stored excerpts after " + checked + " checked ones: " + e, lastGood);
        }
    }
}
