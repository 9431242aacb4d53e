package io.queueenterprise.replication;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.protocol.client.TailMode;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteTailer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Remote tailers against three node child JVMs (UDP loopback, encrypted queue): a tailer whose replica is SIGKILLed
 * resumes on another one with no gap and no duplicate (seeded trials: {@code -Dqe.remote.tail.seed=S
 * -Dqe.remote.tail.trials=N}); in replicated-reads mode a tailer sees an excerpt only once a majority holds it.
 * Every child is stopped by PID; logs under {@code target/remote-tail-logs}.
 */
@org.junit.jupiter.api.Tag("process")
@org.junit.jupiter.api.Tag("slow")
class RemoteTailFailoverTest {
    private static final String QUEUE = RemoteTailTest.QUEUE;

    @TempDir
    Path tmp;

    @Test
    void aTailerWhoseReplicaIsKilledResumesOnAnotherWithNoGapAndNoDuplicate() throws Exception {
        SeededTrials.run("qe.remote.tail", 2, tmp, "remote-tail-logs", this::killTrial);
    }

    private void killTrial(long seed, Path root, Path logs) throws Exception {
        Random random = new Random(seed);
        TestCluster cluster = new TestCluster(root, 3, List.of(TestCluster.queue(QUEUE, AckMode.QUORUM))).serveClients();
        String spec = QUEUE + ":QUORUM:FAST_DAILY:AES_128_CTR_POLY1305";
        KeyRing ring = RemoteClientTest.newRing();
        NodeProcess[] nodes = new NodeProcess[3];
        Map<Integer, Long> acknowledged = new ConcurrentHashMap<>();
        Map<Integer, Boolean> uncertain = new ConcurrentHashMap<>();
        int[] written = new int[1];
        AtomicReference<Throwable> writerFailure = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread writer = null;
        int victim = random.nextInt(3); // the tailer's preferred replica: the leader (then a follower is promoted) or a follower
        List<long[]> read = new ArrayList<>();
        long resumes;
        String servedAfter;
        try {
            for (int i = 0; i < 3; i++) {
                nodes[i] = NodeProcess.start(cluster, i, spec, logs.resolve("node-" + i + ".log"));
            }
            nodes[0].command("promote 1");
            nodes[1].command("follow replica-0 1");
            nodes[2].command("follow replica-0 1");
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, true);
            writer = new Thread(() -> {
                try (RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                        .clientCredential(cluster.clientCredential).keyRing(ring).ackTimeout(Duration.ofSeconds(20)).build();
                     QueueAppender appender = remote.createAppender()) {
                    for (int n = 0; !stop.get(); n++) {
                        written[0] = n + 1;
                        try {
                            acknowledged.put(n, appender.write(message(n)));
                        } catch (io.queueenterprise.remote.RemoteQueueException e) {
                            if (!e.mayBeAppended()) {
                                throw e;
                            }
                            uncertain.put(n, Boolean.TRUE); // timed out across the failover: in the queue at most once
                        }
                    }
                } catch (Throwable e) {
                    writerFailure.set(e);
                }
            }, "remote-writer");
            writer.start();
            String victimAddress = cluster.clientAddresses().get(victim);
            try (RemoteQueue reader = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                    .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 RemoteTailer tailer = reader.createTailer(TailMode.REPLICATED, victimAddress)) {
                long start = System.nanoTime();
                long killAt = start + (300 + random.nextInt(700)) * 1_000_000L;
                long restartAt = killAt + (500 + random.nextInt(1000)) * 1_000_000L;
                long stopAt = restartAt + 1_000_000_000L;
                boolean killed = false;
                boolean restarted = false;
                int leader = 0;
                byte[] buffer = new byte[256];
                long lastReadAt = System.nanoTime();
                long deadline = start + 90_000_000_000L;
                while (System.nanoTime() < deadline) {
                    long now = System.nanoTime();
                    if (!killed && now > killAt && tailer.servingNode() != null) {
                        // the replica serving the tailer now (the preferred one, unless a stall on this machine moved it)
                        victim = cluster.clientAddresses().indexOf(tailer.servingNode().getHostString() + ":" + tailer.servingNode().getPort());
                        nodes[victim].kill();
                        assertEquals(137, nodes[victim].exitValue(), "killed by SIGKILL");
                        killed = true;
                        if (victim == 0) { // the operator promotes the survivor holding the most at term 2
                            int a = nodes[1].status().lastIndex() >= nodes[2].status().lastIndex() ? 1 : 2;
                            nodes[a].command("promote 2");
                            nodes[3 - a].command("follow replica-" + a + " 2");
                            leader = a;
                        }
                    }
                    if (killed && !restarted && now > restartAt) {
                        nodes[victim] = NodeProcess.start(cluster, victim, spec, logs.resolve("node-" + victim + ".log"));
                        nodes[victim].command(leader == 0 ? "follow replica-0 1" : "follow replica-" + leader + " 2");
                        restarted = true;
                    }
                    if (restarted && now > stopAt) {
                        stop.set(true);
                    }
                    int length = tailer.read(buffer);
                    if (length >= 0) {
                        String text = new String(buffer, 0, length, StandardCharsets.US_ASCII);
                        if (text.startsWith("message ")) {
                            read.add(new long[]{Integer.parseInt(text.substring(8)), tailer.lastReadIndex()});
                        }
                    } else if (stop.get() && !writer.isAlive() && read.size() >= acknowledged.size()
                            && System.nanoTime() - lastReadAt > 1_000_000_000L) {
                        break; // everything acknowledged arrived, and nothing else for a second
                    }
                    if (length >= 0) {
                        lastReadAt = System.nanoTime();
                    }
                }
                resumes = tailer.resumes();
                servedAfter = tailer.servingNode() == null ? "none" : tailer.servingNode().toString();
            }
            writer.join(60_000);
            assertNull(writerFailure.get(), () -> "the writer failed: " + writerFailure.get());
        } finally {
            stop.set(true);
            if (writer != null) {
                writer.join(60_000);
            }
            for (NodeProcess node : nodes) {
                if (node != null) {
                    node.close();
                }
            }
        }
        System.out.println("remote tail trial seed " + seed + ": victim replica-" + victim + ", " + written[0] + " written, "
                + acknowledged.size() + " acknowledged, " + uncertain.size() + " timed out, " + read.size() + " read, "
                + resumes + " resumes, served last by " + servedAfter);
        assertTrue(acknowledged.size() > 50, "the trial acknowledged a stream: " + acknowledged.size());
        assertTrue(resumes >= 1, "the tailer resumed after its replica was killed");
        Map<Integer, Long> at = new java.util.HashMap<>();
        long previous = -1;
        for (long[] m : read) {
            int n = (int) m[0];
            assertNull(at.put(n, m[1]), "message " + n + " read twice");
            assertTrue(n > previous, "message " + n + " after " + previous + ": not in the client's order");
            previous = n;
            assertTrue(acknowledged.containsKey(n) || uncertain.containsKey(n), "message " + n + " was never written");
        }
        for (Map.Entry<Integer, Long> e : acknowledged.entrySet()) {
            assertEquals(e.getValue(), at.get(e.getKey()), "acknowledged message " + e.getKey() + " read once at the index its write returned");
        }
    }

    @Test
    void replicatedReadsSeeAnExcerptOnlyOnceAMajorityHoldsIt() throws Exception {
        TestCluster cluster = new TestCluster(tmp, 3, List.of(TestCluster.queue(QUEUE, AckMode.ASYNC))).serveClients();
        String spec = QUEUE + ":ASYNC:FAST_DAILY:AES_128_CTR_POLY1305";
        KeyRing ring = RemoteClientTest.newRing();
        NodeProcess[] nodes = new NodeProcess[3];
        Path logs = Path.of("target", "remote-tail-logs", "replicated-reads");
        try {
            for (int i = 0; i < 3; i++) {
                nodes[i] = NodeProcess.start(cluster, i, spec, logs.resolve("node-" + i + ".log"));
            }
            nodes[0].command("promote 1");
            nodes[1].command("follow replica-0 1");
            nodes[2].command("follow replica-0 1");
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, false);
            String leader = cluster.clientAddresses().get(0);
            try (RemoteQueue writerQueue = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                    .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 QueueAppender appender = writerQueue.createAppender();
                 RemoteQueue replicatedQueue = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                         .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 RemoteTailer replicated = replicatedQueue.createTailer(TailMode.REPLICATED, leader);
                 RemoteQueue allQueue = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                         .clientCredential(cluster.clientCredential).keyRing(ring).build();
                 RemoteTailer all = allQueue.createTailer(TailMode.ALL, leader)) {
                long first = appender.write("replicated".getBytes(StandardCharsets.US_ASCII));
                assertEquals(List.of(first, first), List.of(lastIndexOfNext(all, 2), lastIndexOfNext(replicated, 2)),
                        "both see the local excerpt and a replicated one");
                // both followers frozen: the leader appends (async acks), no majority holds it
                nodes[1].signal("STOP");
                nodes[2].signal("STOP");
                long held;
                try {
                    held = appender.write("held back".getBytes(StandardCharsets.US_ASCII));
                    assertEquals(held, lastIndexOfNext(all, 1), "all-appended mode sees it at once");
                    assertEquals(-2, lastIndexOfNext(replicated, 1, Duration.ofSeconds(2)), "replicated reads do not, while no majority holds it");
                } finally {
                    nodes[1].signal("CONT");
                }
                assertEquals(held, lastIndexOfNext(replicated, 1, Duration.ofSeconds(30)), "once a follower holds it, a majority does");
                nodes[2].signal("CONT");
            }
        } finally {
            for (NodeProcess node : nodes) {
                if (node != null) {
                    try {
                        node.signal("CONT"); // never leave a frozen child behind
                    } catch (RuntimeException alreadyGone) {
                        // it exited: nothing to resume
                    }
                    node.close();
                }
            }
        }
    }

    private static long lastIndexOfNext(RemoteTailer tailer, int n) {
        return lastIndexOfNext(tailer, n, Duration.ofSeconds(20));
    }

    /** Reads {@code n} excerpts within {@code patience}; the last one's index, or -2 when fewer came. */
    private static long lastIndexOfNext(RemoteTailer tailer, int n, Duration patience) {
        byte[] buffer = new byte[256];
        long deadline = System.nanoTime() + patience.toNanos();
        int got = 0;
        while (got < n && System.nanoTime() < deadline) {
            if (tailer.read(buffer) >= 0) {
                got++;
            }
        }
        return got == n ? tailer.lastReadIndex() : -2;
    }

    private static byte[] message(int n) {
        return ("message " + n).getBytes(StandardCharsets.US_ASCII);
    }
}
