package io.queueenterprise.kubernetes.probe;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

import net.openhft.chronicle.queue.RollCycles;

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
 * </pre>
 * An append that a majority did not acknowledge in time ({@code AckTimeoutException}) or that the queue refused (the
 * node does not lead) ends the run with {@code NOT_ACKED}; the test counts only {@code ACKED} lines as promised.
 * Exit codes: 0 done (some appends may be NOT_ACKED), 2 bad arguments.
 */
public final class QueueClient {
    private QueueClient() {
    }

    public static void main(String[] args) {
        PrintStream out = System.out;
        try {
            if (args.length == 6 && "append".equals(args[0])) {
                append(queue(args[1], args[2]).quorumAcks(Duration.ofMillis(positive(args[5]))), positive(args[3]), args[4], out);
            } else if (args.length == 3 && "read".equals(args[0])) {
                read(queue(args[1], args[2]), out);
            } else {
                throw new IllegalArgumentException("usage: QueueClient append DIR ROLL_CYCLE COUNT PREFIX ACK_TIMEOUT_MS"
                    + " | read DIR ROLL_CYCLE");
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
