package io.queueenterprise.cli;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.BitSet;
import java.util.List;
import java.util.stream.Stream;

/**
 * Searches a queue's cycle files, as raw bytes on disk, for every demo message: its full 40-byte
 * plaintext and its distinctive part ({@code order=} + ten digits). Both contain the anchor
 * {@code order=}, so visiting every anchor occurrence finds every occurrence of either; each hit is
 * then compared byte for byte with the message its digits name.
 */
final class PlaintextSearch {
    /** Messages (out of those searched for) whose full plaintext / distinctive part occurs somewhere. */
    record Found(int fullPlaintext, int distinctivePart) {
    }

    /** Mapped at most this much at a time; windows overlap by a message so none is cut in two. */
    private static final long WINDOW = 1L << 30;

    private PlaintextSearch() {
    }

    static Found inCycleFiles(Path queueDir, int messages) throws IOException {
        BitSet full = new BitSet(messages);
        BitSet distinctive = new BitSet(messages);
        List<Path> cycleFiles;
        try (Stream<Path> files = Files.list(queueDir)) {
            cycleFiles = files.filter(p -> p.getFileName().toString().endsWith(".cq4")).sorted().toList();
        }
        byte[] expected = new byte[DemoMessages.SIZE];
        for (Path file : cycleFiles) {
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
                long size = channel.size();
                for (long position = 0; position < size; position += WINDOW) {
                    long length = Math.min(size - position, WINDOW + DemoMessages.SIZE);
                    MappedByteBuffer map = channel.map(FileChannel.MapMode.READ_ONLY, position, length);
                    // Anchors starting in the overlap belong to the next window.
                    int starts = (int) Math.min(length, WINDOW);
                    scan(map, starts, messages, expected, full, distinctive);
                }
            }
        }
        return new Found(full.cardinality(), distinctive.cardinality());
    }

    private static void scan(MappedByteBuffer map, int starts, int messages, byte[] expected, BitSet full, BitSet distinctive) {
        byte[] anchor = DemoMessages.ANCHOR;
        int last = map.limit() - DemoMessages.DISTINCTIVE_LENGTH;
        for (int i = 0; i < starts && i <= last; i++) {
            if (map.get(i) != anchor[0] || !matches(map, i, anchor)) {
                continue;
            }
            int sequence = digits(map, i + anchor.length);
            if (sequence < 0 || sequence >= messages) {
                continue;
            }
            distinctive.set(sequence);
            if (i + DemoMessages.SIZE <= map.limit()) {
                DemoMessages.fill(expected, sequence);
                if (matches(map, i, expected)) {
                    full.set(sequence);
                }
            }
        }
    }

    private static boolean matches(MappedByteBuffer map, int at, byte[] bytes) {
        for (int j = 0; j < bytes.length; j++) {
            if (map.get(at + j) != bytes[j]) {
                return false;
            }
        }
        return true;
    }

    /** The ten decimal digits at {@code at} as a number, or -1 if they are not ten digits. */
    private static int digits(MappedByteBuffer map, int at) {
        long value = 0;
        for (int j = 0; j < DemoMessages.DIGITS; j++) {
            int c = map.get(at + j) - '0';
            if (c < 0 || c > 9) {
                return -1;
            }
            value = value * 10 + c;
        }
        return value > Integer.MAX_VALUE ? -1 : (int) value;
    }
}
