package io.queueenterprise.kubernetes.probe;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

import net.openhft.chronicle.queue.RollCycles;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.crypto.MasterKey;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueException;
import io.queueenterprise.queue.QueueTailer;

/**
 * A queue client run beside a queue node, in the node's pod ({@code kubectl exec}): it appends to, or reads, a
 * node-hosted plain queue through the library, exactly as an application sharing the node's data volume does, and
 * prints one line per excerpt so that a test can tell which appends a majority acknowledged.
 *
 * <pre>
 * QueueClient append DIR ROLL_CYCLE COUNT PREFIX ACK_TIMEOUT_MS   quorum acks: ACKED index text | NOT_ACKED text reason
 * QueueClient read DIR ROLL_CYCLE                                  EXCERPT index text ... then END count
 * QueueClient create-encrypted DIR ROLL_CYCLE TEXT ACK_TIMEOUT_MS  a key holder's first write: ACKED index text
 * QueueClient read-encrypted DIR ROLL_CYCLE                        as read, opening the envelopes
 * QueueClient scan DIR MARKER                                      SCANNED files bytes MATCHES n: the marker's UTF-8
 *                                                                  bytes in every file under DIR (no shell in the image)
 * </pre>
 * The encrypted modes read the queue's data key (key id 1, 32 bytes as 64 hex characters) from standard input, so
 * that the key never lies on the node's file system or in its process list: a test hands it to this one process.
 * An append that a majority did not acknowledge in time ({@code AckTimeoutException}) or that the queue refused (the
 * node does not lead) ends the run with {@code NOT_ACKED}; the test counts only {@code ACKED} lines as promised.
 * Exit codes: 0 done (some appends may be NOT_ACKED), 2 bad arguments.
 */
public final class QueueClient {
    /** Bytes a scan reads at a time (plus the marker's length - 1 kept from the chunk before). */
    static final int SCAN_CHUNK = 1 << 20;

    private QueueClient() {
    }

    public static void main(String[] args) {
        PrintStream out = System.out;
        try {
            if (args.length == 6 && "append".equals(args[0])) {
                append(queue(args[1], args[2]).quorumAcks(Duration.ofMillis(positive(args[5]))), positive(args[3]), args[4], out);
            } else if (args.length == 3 && "read".equals(args[0])) {
                read(queue(args[1], args[2]), out);
            } else if (args.length == 5 && "create-encrypted".equals(args[0])) {
                EnterpriseQueue.Builder builder = encrypted(args[1], args[2]).quorumAcks(Duration.ofMillis(positive(args[4])));
                writeOne(builder, args[3], out);
            } else if (args.length == 3 && "read-encrypted".equals(args[0])) {
                read(encrypted(args[1], args[2]).readOnly(true), out);
            } else if (args.length == 3 && "scan".equals(args[0])) {
                scan(Path.of(args[1]), args[2].getBytes(StandardCharsets.UTF_8), out);
            } else {
                throw new IllegalArgumentException("usage: QueueClient append DIR ROLL_CYCLE COUNT PREFIX ACK_TIMEOUT_MS"
                    + " | read DIR ROLL_CYCLE | create-encrypted DIR ROLL_CYCLE TEXT ACK_TIMEOUT_MS (key on stdin)"
                    + " | read-encrypted DIR ROLL_CYCLE (key on stdin) | scan DIR MARKER");
            }
        } catch (IllegalArgumentException e) {
            System.err.println("QueueClient: " + e.getMessage());
            System.exit(2);
        }
        out.flush();
    }

    private static EnterpriseQueue.Builder queue(String directory, String rollCycle) {
        RollCycles cycle;
        try {
            cycle = RollCycles.valueOf(rollCycle);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("ROLL_CYCLE '" + rollCycle + "' is not a Chronicle RollCycles name");
        }
        return EnterpriseQueue.builder(Path.of(directory)).rollCycle(cycle).plain();
    }

    /** An encrypted queue (the nodes' default mode, AES-128-CTR + Poly1305) named as its directory, keyed from stdin. */
    private static EnterpriseQueue.Builder encrypted(String directory, String rollCycle) {
        Path path = Path.of(directory);
        return queue(directory, rollCycle).name(path.getFileName().toString()).encrypted(KeyRing.single(MasterKey.of(1, keyFromStdin())));
    }

    private static byte[] keyFromStdin() {
        String line;
        try {
            line = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.US_ASCII)).readLine();
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("cannot read the data key from standard input: " + e.getMessage());
        }
        if (line == null || !line.trim().matches("[0-9a-fA-F]{64}")) {
            throw new IllegalArgumentException("standard input must hold the data key as 64 hex characters");
        }
        return java.util.HexFormat.of().parseHex(line.trim());
    }

    /** One write by a key holder (it records the key in a new queue's descriptor): ACKED index text once a majority holds it. */
    private static void writeOne(EnterpriseQueue.Builder builder, String text, PrintStream out) {
        try (EnterpriseQueue queue = builder.build(); QueueAppender appender = queue.createAppender()) {
            try {
                out.println("ACKED " + appender.write(text.getBytes(StandardCharsets.UTF_8)) + " " + text);
            } catch (QueueException e) {
                out.println("NOT_ACKED " + text + " " + oneLine(e));
            }
        }
    }

    /** How often {@code marker} occurs in the files under {@code root}, byte for byte (overlaps not counted twice). */
    static void scan(Path root, byte[] marker, PrintStream out) {
        if (marker.length == 0) {
            throw new IllegalArgumentException("MARKER must not be empty");
        }
        long files = 0;
        long bytes = 0;
        long matches = 0;
        // in chunks: queue files are large sparse mappings (tens of MiB each) and the probe runs with a small heap;
        // a chunk keeps the last marker.length - 1 bytes of the one before, so a marker across the boundary is found
        byte[] window = new byte[SCAN_CHUNK + marker.length - 1];
        try (java.util.stream.Stream<Path> paths = java.nio.file.Files.walk(root)) {
            for (Path file : paths.filter(java.nio.file.Files::isRegularFile).toList()) {
                files++;
                try (java.io.InputStream in = java.nio.file.Files.newInputStream(file)) {
                    int kept = 0;
                    int read;
                    while ((read = in.readNBytes(window, kept, window.length - kept)) > 0) {
                        bytes += read;
                        int filled = kept + read;
                        int next = 0;
                        for (int i = 0; i + marker.length <= filled; i++) {
                            if (java.util.Arrays.equals(window, i, i + marker.length, marker, 0, marker.length)) {
                                matches++;
                                i += marker.length - 1;
                                next = i + 1;
                            }
                        }
                        kept = Math.min(marker.length - 1, filled - next);
                        System.arraycopy(window, filled - kept, window, 0, kept);
                    }
                }
            }
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("cannot scan " + root + ": " + e.getMessage());
        }
        out.println("SCANNED " + files + " " + bytes + " MATCHES " + matches);
    }

    private static void append(EnterpriseQueue.Builder builder, int count, String prefix, PrintStream out) {
        try (EnterpriseQueue queue = builder.build(); QueueAppender appender = queue.createAppender()) {
            for (int i = 0; i < count; i++) {
                String text = prefix + "-" + i;
                try {
                    long index = appender.write(text.getBytes(StandardCharsets.UTF_8)); // returns once a majority holds it
                    out.println("ACKED " + index + " " + text);
                } catch (QueueException e) { // AckTimeoutException, or refused: the node does not lead

                    out.println("NOT_ACKED " + text + " " + oneLine(e));
                    return;
                }
            }
        }
    }

    private static void read(EnterpriseQueue.Builder builder, PrintStream out) {
        byte[] buffer = new byte[4096];
        long count = 0;
        try (EnterpriseQueue queue = builder.build(); QueueTailer tailer = queue.createTailer()) {
            int length;
            while ((length = tailer.read(buffer)) >= 0) {
                out.println("EXCERPT " + tailer.lastReadIndex() + " " + new String(buffer, 0, length, StandardCharsets.UTF_8));
                count++;
            }
        }
        out.println("END " + count);
    }

    private static String oneLine(Exception e) {
        return (e.getClass().getSimpleName() + ": " + e.getMessage()).replace('\n', ' ');
    }

    private static int positive(String value) {
        try {
            int number = Integer.parseInt(value);
            if (number > 0) {
                return number;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new IllegalArgumentException("'" + value + "' is not a positive integer");
    }
}
