package io.queueenterprise.replication;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueTailer;
import io.queueenterprise.remote.AppendListener;
import io.queueenterprise.remote.RemoteAppender;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import io.queueenterprise.replication.history.LinearizabilityChecker;
import io.queueenterprise.replication.history.OperationHistory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two remote clients append numbered streams, each with a window of appends in flight
 * ({@link RemoteAppender#writeAsync}), to a quorum-mode encrypted queue on three node child JVMs while the
 * leader is SIGKILLed at seeded random points (each writer's window fills while the leader is dead); the test plays the operator (promotes the survivor with the highest
 * last index under a new term, restarts the victim as a follower). Seeded trials, bounded in count and time; replay
 * with {@code -Dqe.remote.failover.seed=S -Dqe.remote.failover.trials=N}.
 *
 * <p>Properties, read back with the key after convergence: every acknowledged message is in the queue exactly once,
 * at the index its write returned; each writer's messages are in its order; a write that timed out is there at most once.
 */
@org.junit.jupiter.api.Tag("process")
@org.junit.jupiter.api.Tag("slow")
class RemoteClientFailoverTest {
    /** {@code sendBatching} of the second writer: its appends wait, in its window, for the next step. */
    private static final Duration SECOND_CLIENT_LINGER = Duration.ofMillis(5);
    private static final String QUEUE = "payments";
    private static final Duration CONVERGE = Duration.ofSeconds(60);
    /** Remote clients writing at once, each with its own window. */
    private static final int WRITERS = 2;
    /**
     * Each writer's window: 512 appends, so that 1,024 are in flight from the two writers while the leader is dead.
     */
    private static final int WINDOW = 512;
    /** Appends a second per writer: a dead leader's second or more fills the window; a trial's history stays small. */
    private static final int RATE = 800;

    @TempDir
    Path tmp;

    @Test
    void everyAcknowledgedMessageIsPresentExactlyOnceInTheClientsOrderAcrossLeaderKills() throws Exception {
        SeededTrials.run("qe.remote.failover", 2, tmp, "remote-failover-logs", this::trial);
    }

    private void trial(long seed, Path root, Path logs) throws Exception {
        Random random = new Random(seed);
        TestCluster cluster = new TestCluster(root, 3, List.of(TestCluster.queue(QUEUE, AckMode.QUORUM))).serveClients();
        String spec = QUEUE + ":QUORUM:FAST_DAILY:AES_128_CTR_POLY1305";
        KeyRing ring = RemoteClientTest.newRing();
        NodeProcess[] nodes = new NodeProcess[3];
        Map<Long, Long> acknowledged = new ConcurrentHashMap<>();
        Map<Long, Boolean> uncertain = new ConcurrentHashMap<>();
        AtomicReference<Throwable> writerFailure = new AtomicReference<>();
        OperationHistory history = new OperationHistory();
        long[] written = new long[WRITERS];
        try {
            for (int i = 0; i < 3; i++) {
                nodes[i] = NodeProcess.start(cluster, i, spec, logs.resolve("node-" + i + ".log"));
            }
            nodes[0].command("promote 1");
            nodes[1].command("follow replica-0 1");
            nodes[2].command("follow replica-0 1");
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, true);
            AtomicBoolean stop = new AtomicBoolean();
            Thread[] writers = new Thread[WRITERS];
            int[] fullWindows = new int[WRITERS];
            for (int w = 0; w < WRITERS; w++) {
                int client = w;
                writers[w] = new Thread(() -> write(client, cluster, ring, history, acknowledged, uncertain, writerFailure, stop,
                        written, fullWindows), "remote-writer-" + w);
            }
            for (Thread writer : writers) {
                writer.start();
            }
            int leader = 0;
            long term = 1;
            for (int kill = 0; kill < 2; kill++) {
                Thread.sleep(300 + random.nextInt(700));
                nodes[leader].kill();
                assertEquals(137, nodes[leader].exitValue(), "killed by SIGKILL");
                int a = (leader + 1) % 3;
                int b = (leader + 2) % 3;
                int next = nodes[a].status().lastIndex() >= nodes[b].status().lastIndex() ? a : b;
                int other = next == a ? b : a;
                term++;
                Thread.sleep(random.nextInt(200)); // the operator takes a moment to notice
                nodes[next].command("promote " + term);
                nodes[other].command("follow replica-" + next + " " + term);
                nodes[leader] = NodeProcess.start(cluster, leader, spec, logs.resolve("node-" + leader + ".log"));
                nodes[leader].command("follow replica-" + next + " " + term);
                leader = next;
            }
            Thread.sleep(500);
            stop.set(true);
            for (Thread writer : writers) {
                writer.join(60_000);
            }
            assertNull(writerFailure.get(), () -> "a writer failed: " + writerFailure.get());
            for (int w = 0; w < WRITERS; w++) {
                assertTrue(fullWindows[w] > 0, "writer " + w + " never had a full window in flight");
            }
            NodeProcess leading = nodes[leader];
            assertTrue(TestCluster.await(CONVERGE, () -> NodeProcess.converged(nodes, leading)), "replicas did not converge");
        } finally {
            for (NodeProcess node : nodes) {
                if (node != null) {
                    node.close();
                }
            }
        }
        System.out.println("remote failover trial seed " + seed + ": " + Arrays.toString(written) + " written, " + acknowledged.size()
                + " acknowledged, " + uncertain.size() + " timed out");
        assertTrue(acknowledged.size() > 50, "the trial acknowledged a stream: " + acknowledged.size());
        for (int replica = 0; replica < 3; replica++) {
            // the opener refuses a repeated or reordered writer sequence (REPLAYED_OR_REORDERED): reading all is a check
            long call = System.nanoTime();
            List<long[]> read = readMessages(cluster.queueDirectory(replica, QUEUE), ring);
            // the remote writer's messages as this replica holds them (the key holder's first excerpt is no append of it)
            TreeMap<Long, byte[]> held = new TreeMap<>();
            read.forEach(m -> held.put(m[1], message((int) (m[0] >>> 32), m[0] & 0xFFFF_FFFFL)));
            history.read(QUEUE, "replica-" + replica, call, System.nanoTime(), held);
            Map<Long, Long> at = new HashMap<>();
            long[] previous = new long[WRITERS];
            Arrays.fill(previous, -1);
            for (long[] m : read) {
                long key = m[0];
                int client = (int) (key >>> 32);
                long n = key & 0xFFFF_FFFFL;
                assertNull(at.put(key, m[1]), "message " + client + "/" + n + " twice on replica " + replica);
                assertTrue(n > previous[client], "message " + client + "/" + n + " after " + previous[client] + ": not the writer's order");
                previous[client] = n;
                assertTrue(n < written[client], "message " + client + "/" + n + " was never written");
            }
            for (Map.Entry<Long, Long> e : acknowledged.entrySet()) {
                Long index = at.get(e.getKey());
                assertNotNull(index, "acknowledged message " + (e.getKey() >>> 32) + "/" + (e.getKey() & 0xFFFF_FFFFL)
                        + " lost on replica " + replica);
                assertEquals(e.getValue(), index, "message " + (e.getKey() >>> 32) + "/" + (e.getKey() & 0xFFFF_FFFFL)
                        + " is not at the index its write returned");
            }
        }
        Files.createDirectories(logs);
        Path historyFile = history.write(logs.resolve("history.jsonl"));
        LinearizabilityChecker.Verdict verdict = LinearizabilityChecker.check(historyFile, logs.resolve("history.html"));
        System.out.print("[RemoteClientFailoverTest] seed " + seed + ": " + verdict.output());
        assertTrue(verdict.linearizable(), "the independent checker (Porcupine) on " + historyFile + ": " + verdict.output());
    }

    /**
     * One writer: a RemoteQueue appending its numbered stream with {@link RemoteAppender#writeAsync} (a window of
     * {@link #WINDOW} in flight), paced to about {@link #RATE} a second so that a trial's history stays checkable; while a
     * leader is dead the window fills (counted in {@code fullWindows}) and the writer waits in writeAsync. The second
     * client batches its sends ({@link #SECOND_CLIENT_LINGER}: longer than its pace, so each write while others are in
     * flight waits for the pacing loop's next poll), the first sends each write at once.
     */
    private static void write(int client, TestCluster cluster, KeyRing ring, OperationHistory history, Map<Long, Long> acknowledged,
                              Map<Long, Boolean> uncertain, AtomicReference<Throwable> failure, AtomicBoolean stop, long[] written,
                              int[] fullWindows) {
        Map<Long, OperationHistory.Append> ops = new ConcurrentHashMap<>();
        AppendListener listener = new AppendListener() {
            @Override
            public void onAcknowledged(long n, long index) {
                ops.remove(n).ok(index);
                acknowledged.put(key(client, n), index);
            }

            @Override
            public void onFailed(long n, RemoteQueueException e) {
                OperationHistory.Append op = ops.remove(n);
                if (!e.mayBeAppended()) {
                    op.refused();
                    failure.compareAndSet(null, e);
                    return;
                }
                op.unknown();
                uncertain.put(key(client, n), Boolean.TRUE); // timed out: in the queue at most once
            }
        };
        try (RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                .clientCredential(cluster.clientCredential).keyRing(ring).ackTimeout(Duration.ofSeconds(20))
                .backPressureTimeout(Duration.ofSeconds(20)).window(WINDOW, RemoteQueue.DEFAULT_WINDOW_BYTES)
                .sendBatching(client == 1 ? SECOND_CLIENT_LINGER : Duration.ZERO).build();
             RemoteAppender appender = remote.createAppender(listener)) {
            long started = System.nanoTime();
            for (long n = 0; !stop.get(); n++) {
                while (n > (System.nanoTime() - started) / (1_000_000_000L / RATE)) {
                    if (appender.poll() == 0) { // paced: drive acks meanwhile
                        java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                    }
                }
                byte[] message = message(client, n);
                ops.put(n, history.append(client, QUEUE, message));
                written[client] = n + 1;
                if (appender.inFlight() == WINDOW) {
                    fullWindows[client]++;
                }
                appender.writeAsync(message, 0, message.length, n);
            }
            appender.flush();
        } catch (Throwable e) {
            failure.compareAndSet(null, e);
        }
    }

    private static long key(int client, long n) {
        return (long) client << 32 | n;
    }

    private static byte[] message(int client, long n) {
        return ("message " + client + " " + n).getBytes(StandardCharsets.US_ASCII);
    }

    /** (number, index) of every remote message, in queue order; the local first excerpt is skipped. */
    private static List<long[]> readMessages(Path dir, KeyRing ring) {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).encrypted(ring).readOnly(true).build();
             QueueTailer tailer = queue.createTailer()) {
            List<long[]> out = new ArrayList<>();
            byte[] buffer = new byte[256];
            int length;
            while ((length = tailer.read(buffer)) >= 0) {
                String text = new String(Arrays.copyOf(buffer, length), StandardCharsets.US_ASCII);
                if (text.startsWith("message ")) {
                    String[] parts = text.split(" ");
                    out.add(new long[]{key(Integer.parseInt(parts[1]), Long.parseLong(parts[2])), tailer.lastReadIndex()});
                }
            }
            return out;
        }
    }

}
