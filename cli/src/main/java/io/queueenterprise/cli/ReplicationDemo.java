package io.queueenterprise.cli;

import io.queueenterprise.crypto.CipherMode;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueTailer;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The demo's replication part: a leader and two followers as separate {@code qe node} processes on loopback,
 * encrypted quorum writes from this process, a follower killed (SIGKILL) and restarted, the leader killed and a
 * follower promoted, the old leader back as a follower; then a digest per replica, the messages read back with the
 * key, and a search of every replica's cycle files for the plaintext. Printed in words a newcomer follows.
 */
final class ReplicationDemo {
    static final String QUEUE = "orders";
    private static final String ROLL_CYCLE = "FAST_DAILY";
    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(10);
    /** How long a just-promoted leader may take to acknowledge (its lease: 2 s and a margin after a majority follows). */
    private static final Duration LEASE_WAIT = Duration.ofSeconds(30);
    private static final Duration CATCH_UP = Duration.ofSeconds(60);

    private final PrintWriter out;
    private final DemoCleanup cleanup;
    private final Path keyDirectory;
    private final int perPhase;
    private int written;
    private int step;

    ReplicationDemo(PrintWriter out, DemoCleanup cleanup, Path keyDirectory, int messagesPerPhase) {
        this.out = out;
        this.cleanup = cleanup;
        this.keyDirectory = keyDirectory;
        this.perPhase = messagesPerPhase;
    }

    /** Runs the whole story in {@code work}; true when every check passed. */
    boolean run(Path work) throws IOException, InterruptedException {
        out.println();
        out.println("Replication: one leader and two followers, each a separate `qe node` process on this machine (UDP loopback).");
        out.println("  Their configuration files (the documents the Kubernetes operator would write) are " + work.resolve("replica-N/node.yaml") + ".");
        out.println("  Nodes never elect themselves: this demo tells them who leads, as the operator or a person would,");
        out.println("  through each node's admin endpoint (promote / follow, with a term number that only ever goes up).");
        out.flush();
        try (LocalCluster cluster = cleanup.register(new LocalCluster(work, List.of("127.0.0.1", "127.0.0.1", "127.0.0.1"), true,
                List.of(new LocalCluster.Queue(QUEUE, ROLL_CYCLE, CipherMode.AES_128_CTR_POLY1305.name(), "QUORUM", "10s")),
                "SLEEPING", LocalCluster::launchHere))) { // stopped by PID however the demo ends
            // The queue is created encrypted by the application (the node holds no key): its descriptor names the
            // cipher mode and is authenticated under the queue's key, and the followers copy it from the leader.
            try (EnterpriseQueue created = EnterpriseQueue.builder(cluster.queueDirectory(0, QUEUE)).encrypted(keyDirectory).build()) {
                say("Created the encrypted queue '%s' in replica-0's data directory (AES-128-CTR + Poly1305; the key stays with this process).", created.name());
            }
            cluster.startAll(0, 1, 2);
            say("Started replica-0, replica-1 and replica-2 (PIDs %d, %d, %d); each waits, in STANDBY, to be told its role.",
                    cluster.pid(0), cluster.pid(1), cluster.pid(2));

            cluster.admin(0).promote(1);
            cluster.admin(1).follow("replica-0", 1);
            cluster.admin(2).follow("replica-0", 1);
            cluster.awaitAcknowledging(0, LEASE_WAIT);
            say("Promoted replica-0 to leader at term 1; replica-1 and replica-2 follow it.");

            write(cluster, 0);
            say("Wrote %,d encrypted messages into the leader's queue. Quorum mode: each write returned only once a majority"
                    + " (2 of 3 replicas) held it, so each one is acknowledged.", perPhase);

            cluster.kill(1);
            say("SIGKILL replica-1: a crash, with no warning and no cleanup.");
            write(cluster, 0);
            say("Wrote %,d more: replica-0 and replica-2 are still a majority, so writes go on.", perPhase);

            cluster.start(1);
            NodeStatus restarted = cluster.admin(1).status();
            awaitCaughtUp(cluster, 0, 1);
            say("Restarted replica-1: it remembered it follows at term %d (%s), resumed from its last excerpt and caught up.",
                    restarted.term(), restarted.role());

            cluster.kill(0);
            say("SIGKILL the leader, replica-0. Until a new leader is chosen, nothing can be written.");
            long durable1 = durable(cluster, 1);
            long durable2 = durable(cluster, 2);
            int next = durable1 >= durable2 ? 1 : 2;
            int other = 3 - next;
            cluster.admin(next).promote(2);
            cluster.admin(other).follow(LocalCluster.nodeId(next), 2);
            long promoted = System.nanoTime();
            cluster.awaitAcknowledging(next, LEASE_WAIT);
            say("Promoted %s, the follower holding the most (durable index 0x%x against 0x%x), at term 2; %s follows it.",
                    LocalCluster.nodeId(next), Math.max(durable1, durable2), Math.min(durable1, durable2), LocalCluster.nodeId(other));

            say("It acknowledged writes %,d ms later: a new leader waits out the old one's lease (2 s, and a tenth more)"
                    + " after a majority follows it, so that two leaders never acknowledge at once.",
                    (System.nanoTime() - promoted) / 1_000_000);
            write(cluster, next);
            say("Wrote %,d more encrypted messages into %s's queue, the new leader's.", perPhase, LocalCluster.nodeId(next));

            cluster.start(0);
            cluster.admin(0).follow(LocalCluster.nodeId(next), 2);
            awaitCaughtUp(cluster, next, 0);
            awaitCaughtUp(cluster, next, other);
            say("Restarted the old leader replica-0 and told it to follow %s at term 2: it kept what they share and caught up.",
                    LocalCluster.nodeId(next));

            return report(cluster, next);
        }
    }

    private boolean report(LocalCluster cluster, int leader) throws IOException {
        say("What each replica holds (a SHA-256 over every excerpt and its index, as stored, still sealed):");
        ReplicaDigest reference = ReplicaDigest.of(cluster.queueDirectory(leader, QUEUE), ROLL_CYCLE);
        boolean identical = true;
        for (int i = 0; i < 3; i++) {
            ReplicaDigest d = ReplicaDigest.of(cluster.queueDirectory(i, QUEUE), ROLL_CYCLE);
            String difference = reference.differenceFrom(d);
            identical &= difference == null;
            out.printf(Locale.ROOT, "      %s  %,6d excerpts  sha256 %s%s%n", LocalCluster.nodeId(i), d.excerpts(),
                    d.whole().substring(0, 16), difference == null ? "" : "  <-- differs: " + difference);
        }
        int readBack = readBack(cluster.queueDirectory(leader, QUEUE));
        int plaintextFound = 0;
        for (int i = 0; i < 3; i++) {
            PlaintextSearch.Found found = PlaintextSearch.inCycleFiles(cluster.queueDirectory(i, QUEUE), written);
            plaintextFound += found.fullPlaintext() + found.distinctivePart();
        }
        boolean ok = identical && reference.excerpts() == written && readBack == written && plaintextFound == 0;
        out.printf(Locale.ROOT, "    Read back with the key from %s: %,d of the %,d acknowledged messages, in order%s.%n",
                LocalCluster.nodeId(leader), readBack, written, readBack == written ? "; none lost" : " <-- UNEXPECTED");
        out.printf(Locale.ROOT, "    Searched every replica's cycle files for each message's plaintext: %s.%n",
                plaintextFound == 0 ? "none found (the followers never had the key)" : plaintextFound + " found <-- UNEXPECTED");
        out.println(ok ? "Replication OK: three identical replicas, every acknowledged message kept, through two crashes and a failover."
                : "Replication FAILED: see the lines marked above.");
        out.flush();
        return ok;
    }

    private void write(LocalCluster cluster, int leader) {
        byte[] message = new byte[DemoMessages.SIZE];
        try (EnterpriseQueue queue = EnterpriseQueue.builder(cluster.queueDirectory(leader, QUEUE)).encrypted(keyDirectory)
                .quorumAcks(ACK_TIMEOUT).build();
             QueueAppender appender = queue.createAppender()) {
            for (int i = 0; i < perPhase; i++) {
                DemoMessages.fill(message, written);
                appender.write(message); // returns once a majority holds it, else throws AckTimeoutException
                written++;
            }
        }
    }

    /** Messages read back in order from {@code dir} with the key, stopping at the first that is not the expected one. */
    private int readBack(Path dir) {
        byte[] expected = new byte[DemoMessages.SIZE];
        byte[] received = new byte[DemoMessages.SIZE + 64];
        int read = 0;
        // Not readOnly: a read-only Chronicle instance sees -1 as the quorum index the node publishes, and a QUORUM
        // queue's tailer then serves nothing (reported to the engine's side); a tailer writes nothing either way.
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(keyDirectory).build();
             QueueTailer tailer = queue.createTailer()) {
            int n;
            while ((n = tailer.read(received)) >= 0) {
                DemoMessages.fill(expected, read);
                if (n != DemoMessages.SIZE || !Arrays.equals(received, 0, n, expected, 0, n)) {
                    break;
                }
                read++;
            }
        }
        return read;
    }

    private static long durable(LocalCluster cluster, int replica) throws IOException {
        return queueStatus(cluster, replica).durableIndex();
    }

    private static QueueStatus queueStatus(LocalCluster cluster, int replica) throws IOException {
        return cluster.admin(replica).status().queues().get(0);
    }

    private static void awaitCaughtUp(LocalCluster cluster, int leader, int follower) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + CATCH_UP.toNanos();
        while (System.nanoTime() < deadline) {
            long last = queueStatus(cluster, leader).lastIndex();
            if (durable(cluster, follower) >= last) {
                return;
            }
            Thread.sleep(50);
        }
        throw new IOException(LocalCluster.nodeId(follower) + " did not catch up with " + LocalCluster.nodeId(leader)
                + " within " + CATCH_UP.toSeconds() + " s (see " + cluster.log(follower) + ")");
    }

    private void say(String format, Object... args) {
        out.printf(Locale.ROOT, "%2d. %s%n", ++step, String.format(Locale.ROOT, format, args));
        out.flush();
    }
}
