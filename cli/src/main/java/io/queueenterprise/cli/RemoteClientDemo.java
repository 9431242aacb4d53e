package io.queueenterprise.cli;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.protocol.client.TailMode;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import io.queueenterprise.remote.RemoteTailer;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The demo's remote-client part: three {@code qe node} processes that take remote clients; a client in this
 * process (as an application in its own pod would be) appends a numbered stream while the leader is SIGKILLed
 * and a follower promoted; a remote tailer then reads everything back from a replica: every acknowledged message
 * once, in order, at the index its write returned. The nodes only ever see sealed envelopes.
 */
final class RemoteClientDemo {
    static final String QUEUE = "payments";
    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(10);
    /** How long a just-promoted leader may take to acknowledge (its lease: 2 s and a margin after a majority follows). */
    private static final Duration LEASE_WAIT = Duration.ofSeconds(30);
    private static final Duration READ_BACK = Duration.ofSeconds(60);

    private final PrintWriter out;
    private final DemoCleanup cleanup;
    private final Path keyDirectory;
    private final int messages;
    private int step;

    RemoteClientDemo(PrintWriter out, DemoCleanup cleanup, Path keyDirectory, int messages) {
        this.out = out;
        this.cleanup = cleanup;
        this.keyDirectory = keyDirectory;
        this.messages = messages;
    }

    /** Runs the story in {@code work}; true when every check passed. */
    boolean run(Path work) throws IOException, InterruptedException {
        out.println();
        out.println("Remote client: an application that does not run beside the queue's files (its own pod, in Kubernetes)");
        out.println("  appends and reads over the network (Aeron UDP, loopback here). It seals each message with its own key");
        out.println("  before sending and opens each one after receiving: the nodes hold no key and only see envelopes.");
        out.flush();
        try (LocalCluster cluster = cleanup.register(new LocalCluster(work, List.of("127.0.0.1", "127.0.0.1", "127.0.0.1"), true,
                List.of(new LocalCluster.Queue(QUEUE, "FAST_DAILY", CipherMode.AES_128_CTR_POLY1305.name(), "QUORUM", "10s")),
                "SLEEPING", LocalCluster::launchHere, true))) { // stopped by PID however the demo ends
            // A key holder creates the queue once (its descriptor records the key); a remote client cannot.
            try (EnterpriseQueue created = EnterpriseQueue.builder(cluster.queueDirectory(0, QUEUE)).encrypted(keyDirectory).build()) {
                say("Created the encrypted queue '%s' on replica-0 with the key (a remote client never creates a queue).", created.name());
            }
            // the nodes get the queue's write key (derived one way from the master key) to check remote writers by
            cluster.authoriseWriters(QUEUE, keyDirectory);
            cluster.startAll(0, 1, 2);
            cluster.admin(0).promote(1);
            cluster.admin(1).follow("replica-0", 1);
            cluster.admin(2).follow("replica-0", 1);
            cluster.awaitAcknowledging(0, LEASE_WAIT);
            say("Started three nodes that also take remote clients (PIDs %d, %d, %d; ports %s); replica-0 leads at term 1.",
                    cluster.pid(0), cluster.pid(1), cluster.pid(2),
                    String.join(", ", cluster.clientAddress(0), cluster.clientAddress(1), cluster.clientAddress(2)));

            long[] acknowledged = new long[messages];
            java.util.Arrays.fill(acknowledged, -1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            int[] timedOut = new int[1];
            List<String> addresses = List.of(cluster.clientAddress(0), cluster.clientAddress(1), cluster.clientAddress(2));
            Path appenderAeron = clientAeronDirectory();
            Thread client = new Thread(() -> {
                try (RemoteQueue remote = RemoteQueue.builder(addresses).queue(QUEUE).clientCredential(cluster.clientCredential())
                        .keyDirectory(keyDirectory).ackTimeout(ACK_TIMEOUT).aeronDirectory(appenderAeron).build();
                     QueueAppender appender = remote.createAppender()) {
                    byte[] message = new byte[DemoMessages.SIZE];
                    for (int n = 0; n < messages; n++) {
                        DemoMessages.fill(message, n);
                        try {
                            acknowledged[n] = appender.write(message); // once a majority holds it (quorum mode)
                        } catch (RemoteQueueException e) {
                            if (!e.mayBeAppended()) {
                                throw e;
                            }
                            timedOut[0]++; // never acknowledged: in the queue at most once
                        }
                    }
                } catch (Throwable e) {
                    failure.set(e);
                }
            }, "demo-remote-client");
            client.start();
            while (client.isAlive() && acknowledged[messages / 3] < 0) {
                Thread.sleep(5);
            }
            cluster.kill(0);
            say("The client is appending %,d numbered messages to the leader; after about a third were acknowledged,"
                    + " SIGKILL the leader, replica-0.", messages);
            int next = cluster.admin(1).status().queues().get(0).durableIndex()
                    >= cluster.admin(2).status().queues().get(0).durableIndex() ? 1 : 2;
            cluster.admin(next).promote(2);
            cluster.admin(3 - next).follow(LocalCluster.nodeId(next), 2);
            say("Promoted %s at term 2. The client was told nothing: it found the new leader itself and resent what had"
                    + " no answer (the same sealed envelope; the leader recognises a retry and does not append it twice).",
                    LocalCluster.nodeId(next));
            client.join(READ_BACK.toMillis());
            if (failure.get() != null) {
                out.println("    The client failed: " + failure.get().getMessage() + " <-- UNEXPECTED");
                out.println("Remote client FAILED.");
                out.flush();
                return false;
            }
            int acked = 0;
            for (long index : acknowledged) {
                acked += index >= 0 ? 1 : 0;
            }
            say("The client's writes returned: %,d acknowledged, %,d timed out (those may be in the queue, at most once).",
                    acked, timedOut[0]);
            return readBack(cluster, addresses, 3 - next, acknowledged, timedOut[0]);
        }
    }

    /** A remote tailer on {@code replica} reads the queue; every acknowledged message exactly once, in order, at its index. */
    private boolean readBack(LocalCluster cluster, List<String> addresses, int replica, long[] acknowledged, int timedOut)
            throws IOException, InterruptedException {
        List<long[]> read = new ArrayList<>(); // (message number, index)
        int others = 0;
        try (RemoteQueue remote = RemoteQueue.builder(addresses).queue(QUEUE).clientCredential(cluster.clientCredential())
                .keyDirectory(keyDirectory).aeronDirectory(clientAeronDirectory()).build();
             RemoteTailer tailer = remote.createTailer(TailMode.REPLICATED, cluster.clientAddress(replica))) {
            byte[] buffer = new byte[DemoMessages.SIZE + 64];
            long deadline = System.nanoTime() + READ_BACK.toNanos();
            long quietSince = System.nanoTime();
            // read until every acknowledged message arrived and the replica has had a moment to send anything after it
            while (System.nanoTime() < deadline) {
                int n = tailer.read(buffer);
                if (n < 0) {
                    if (read.size() >= countAcknowledged(acknowledged) && System.nanoTime() - quietSince > 500_000_000L) {
                        break;
                    }
                    Thread.sleep(1);
                    continue;
                }
                quietSince = System.nanoTime();
                int number = numberOf(buffer, n);
                if (number >= 0) {
                    read.add(new long[]{number, tailer.lastReadIndex()});
                } else {
                    others++;
                }
            }
        }
        int missing = 0;
        int wrongIndex = 0;
        int duplicates = 0;
        int outOfOrder = 0;
        boolean[] seen = new boolean[acknowledged.length];
        int previous = -1;
        for (long[] m : read) {
            int number = (int) m[0];
            if (number < 0 || number >= acknowledged.length) {
                outOfOrder++;
                continue;
            }
            if (seen[number]) {
                duplicates++;
            }
            seen[number] = true;
            if (number <= previous) {
                outOfOrder++;
            }
            previous = number;
            if (acknowledged[number] >= 0 && acknowledged[number] != m[1]) {
                wrongIndex++;
            }
        }
        for (int i = 0; i < acknowledged.length; i++) {
            if (acknowledged[i] >= 0 && !seen[i]) {
                missing++;
            }
        }
        int acked = countAcknowledged(acknowledged);
        boolean ok = missing == 0 && duplicates == 0 && outOfOrder == 0 && wrongIndex == 0;
        say("A remote tailer (replicated reads: only what a majority holds) read the queue back from %s and opened each"
                + " message with the key: %,d messages%s.", LocalCluster.nodeId(replica), read.size(),
                others == 0 ? "" : String.format(Locale.ROOT, " (and %d of another size)", others));
        out.printf(Locale.ROOT, "    Every one of the %,d acknowledged messages present exactly once, in the client's order, at the index"
                + " its write returned: %s.%n", acked, ok ? "yes" : String.format(Locale.ROOT,
                "NO <-- UNEXPECTED (%d missing, %d twice, %d out of order, %d at another index)", missing, duplicates, outOfOrder, wrongIndex));
        if (timedOut > 0) {
            out.printf(Locale.ROOT, "    Of the %d writes that timed out, %d are in the queue (each at most once).%n", timedOut,
                    read.size() - acked);
        }
        out.println(ok ? "Remote client OK: appended through a leader crash and a failover, read back from a replica;"
                + " nothing lost, nothing twice." : "Remote client FAILED: see the lines marked above.");
        out.flush();
        return ok;
    }

    /**
     * A client's Aeron directory where the client would put it (the temporary area), named here so that it is removed
     * however the demo ends: a client still appending when the demo stops (a signal, a timed-out join) never closes.
     */
    private Path clientAeronDirectory() throws IOException {
        Path directory = Files.createTempDirectory("qe-demo-client-aeron-");
        cleanup.register(() -> DemoFiles.deleteRecursively(directory));
        return directory;
    }

    /** The demo message's number when {@code buffer[0, length)} is exactly that message, else -1. */
    private static int numberOf(byte[] buffer, int length) {
        if (length != DemoMessages.SIZE) {
            return -1;
        }
        int number = 0;
        for (int i = DemoMessages.ANCHOR.length; i < DemoMessages.DISTINCTIVE_LENGTH; i++) {
            int digit = buffer[i] - '0';
            if (digit < 0 || digit > 9) {
                return -1;
            }
            number = number * 10 + digit;
        }
        byte[] expected = new byte[DemoMessages.SIZE];
        DemoMessages.fill(expected, number);
        return java.util.Arrays.equals(buffer, 0, length, expected, 0, length) ? number : -1;
    }

    private static int countAcknowledged(long[] acknowledged) {
        int n = 0;
        for (long index : acknowledged) {
            n += index >= 0 ? 1 : 0;
        }
        return n;
    }

    private void say(String format, Object... args) {
        out.printf(Locale.ROOT, "%2d. %s%n", ++step, String.format(Locale.ROOT, format, args));
        out.flush();
    }
}
