package io.queueenterprise.kubernetes.probe;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueException;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;

/**
 * A remote client in a pod of its own (the node image, run with this main class): it appends to a replicated,
 * encrypted queue through the nodes' client port ({@link RemoteQueue}, which seals every excerpt with the data keys
 * of its own Secret before anything leaves the pod) and prints one line per excerpt, so that a test can tell which
 * appends the queue's ack mode acknowledged.
 *
 * <pre>
 * RemoteAppend QUEUE COUNT PREFIX CREDENTIAL_FILE KEY_DIRECTORY ACK_TIMEOUT_MS HOST:PORT...
 *     KEY_FILE name permissions uid:gid (each key file as this process sees it: a Secret volume's mode and group),
 *     then ACKED index text | NOT_ACKED text reason, then CONNECTED host:port (the node it appended to)
 * </pre>
 * Exit codes: 0 done (appends may be NOT_ACKED), 1 could not connect (the reason on stderr), 2 bad arguments.
 */
public final class RemoteAppend {
    private RemoteAppend() {
    }

    public static void main(String[] args) {
        if (args.length < 7) {
            System.err.println("usage: RemoteAppend QUEUE COUNT PREFIX CREDENTIAL_FILE KEY_DIRECTORY ACK_TIMEOUT_MS HOST:PORT...");
            System.exit(2);
        }
        int count;
        long ackTimeoutMillis;
        try {
            count = Integer.parseInt(args[1]);
            ackTimeoutMillis = Long.parseLong(args[5]);
        } catch (NumberFormatException e) {
            System.err.println("RemoteAppend: COUNT and ACK_TIMEOUT_MS must be numbers: " + e.getMessage());
            System.exit(2);
            return;
        }
        List<String> addresses = Arrays.asList(args).subList(6, args.length);
        PrintStream out = System.out;
        reportKeyFiles(Path.of(args[4]), out);
        try (RemoteQueue queue = RemoteQueue.builder(addresses).queue(args[0]).clientCredential(Path.of(args[3]))
                .keyDirectory(Path.of(args[4])).ackTimeout(Duration.ofMillis(ackTimeoutMillis))
                .connectTimeout(Duration.ofSeconds(60)).build();
             QueueAppender appender = queue.createAppender()) {
            for (int i = 0; i < count; i++) {
                String text = args[2] + "-" + i;
                try {
                    out.println("ACKED " + appender.write(text.getBytes(StandardCharsets.UTF_8)) + " " + text);
                } catch (QueueException e) {
                    out.println("NOT_ACKED " + text + " " + (e.getClass().getSimpleName() + ": " + e.getMessage()).replace('\n', ' '));
                    break;
                }
            }
            out.println("CONNECTED " + queue.connectedNode());
        } catch (RemoteQueueException e) {
            System.err.println("RemoteAppend: " + e.getMessage());
            out.flush();
            System.exit(1);
        }
        out.flush();
    }

    /** The mode and owner of each {@code <id>.key} (symlinks followed, as the key ring reads them); nothing on failure. */
    private static void reportKeyFiles(Path directory, PrintStream out) {
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(directory)) {
            for (Path file : files.filter(f -> f.getFileName().toString().endsWith(".key")).sorted().toList()) {
                out.println("KEY_FILE " + file.getFileName() + " "
                    + java.nio.file.attribute.PosixFilePermissions.toString(java.nio.file.Files.getPosixFilePermissions(file)) + " "
                    + java.nio.file.Files.getAttribute(file, "unix:uid") + ":" + java.nio.file.Files.getAttribute(file, "unix:gid"));
            }
        } catch (java.io.IOException | UnsupportedOperationException e) {
            out.println("KEY_FILE unreadable: " + e);
        }
    }
}
