package io.queueenterprise.replication;

import io.queueenterprise.crypto.KeyRing;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueTailer;
import io.queueenterprise.remote.RemoteQueue;
import io.queueenterprise.remote.RemoteQueueException;
import io.queueenterprise.queue.QueueAppender;
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
 * A remote client appends a numbered stream to a quorum-mode encrypted queue on three node child JVMs while the
 * leader is SIGKILLed at seeded random points; the test plays the operator (promotes the survivor with the highest
 * last index under a new term, restarts the victim as a follower). Seeded trials, bounded in count and time; replay
 * with {@code -Dqe.remote.failover.seed=S -Dqe.remote.failover.trials=N}.
 *
 * <p>Properties, read back with the key after convergence: every acknowledged message is in the queue exactly once,
 * at the index its write returned; messages are in the client's order; a write that timed out is there at most once.
 */
@org.junit.jupiter.api.Tag("process")
@org.junit.jupiter.api.Tag("slow")
class RemoteClientFailoverTest {
    private static final String QUEUE = "payments";
    private static final Duration CONVERGE = Duration.ofSeconds(60);

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
        Map<Integer, Long> acknowledged = new ConcurrentHashMap<>();
        Map<Integer, Boolean> uncertain = new ConcurrentHashMap<>();
        AtomicReference<Throwable> writerFailure = new AtomicReference<>();
        OperationHistory history = new OperationHistory();
        int written;
        try {
            for (int i = 0; i < 3; i++) {
                nodes[i] = NodeProcess.start(cluster, i, spec, logs.resolve("node-" + i + ".log"));
            }
            nodes[0].command("promote 1");
            nodes[1].command("follow replica-0 1");
            nodes[2].command("follow replica-0 1");
            RemoteClientTest.initialise(cluster.queueDirectory(0, QUEUE), ring, true);
            AtomicBoolean stop = new AtomicBoolean();
            int[] count = new int[1];
            Thread writer = new Thread(() -> {
                try (RemoteQueue remote = RemoteQueue.builder(cluster.clientAddresses()).queue(QUEUE)
                        .clientCredential(cluster.clientCredential).keyRing(ring).ackTimeout(Duration.ofSeconds(20)).build();
                     QueueAppender appender = remote.createAppender()) {
                    for (int n = 0; !stop.get(); n++) {
                        count[0] = n + 1;
                        byte[] message = message(n);
                        OperationHistory.Append op = history.append(0, QUEUE, message);
                        try {
                            long index = appender.write(message);
                            op.ok(index);
                            acknowledged.put(n, index);
                        } catch (RemoteQueueException e) {
                            if (!e.mayBeAppended()) {
                                op.refused();
                                throw e;
                            }
                            op.unknown();
                            uncertain.put(n, Boolean.TRUE); // timed out: in the queue at most once
                        }
                    }
                } catch (Throwable e) {
                    writerFailure.set(e);
                }
            }, "remote-writer");
            writer.start();
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
            writer.join(60_000);
            assertNull(writerFailure.get(), () -> "the writer failed: " + writerFailure.get());
            written = count[0];
            NodeProcess leading = nodes[leader];
            assertTrue(TestCluster.await(CONVERGE, () -> converged(nodes, leading)), "replicas did not converge");
        } finally {
            for (NodeProcess node : nodes) {
                if (node != null) {
                    node.close();
                }
            }
        }
        System.out.println("remote failover trial seed " + seed + ": " + written + " written, " + acknowledged.size()
                + " acknowledged, " + uncertain.size() + " timed out");
        assertTrue(acknowledged.size() > 50, "the trial acknowledged a stream: " + acknowledged.size());
        for (int replica = 0; replica < 3; replica++) {
            // the opener refuses a repeated or reordered writer sequence (REPLAYED_OR_REORDERED): reading all is a check
            long call = System.nanoTime();
            List<long[]> read = readMessages(cluster.queueDirectory(replica, QUEUE), ring);
            // the remote writer's messages as this replica holds them (the key holder's first excerpt is no append of it)
            TreeMap<Long, byte[]> held = new TreeMap<>();
            read.forEach(m -> held.put(m[1], message((int) m[0])));
            history.read(QUEUE, "replica-" + replica, call, System.nanoTime(), held);
            Map<Integer, Long> at = new HashMap<>();
            int previous = -1;
            for (long[] m : read) {
                int n = (int) m[0];
                assertNull(at.put(n, m[1]), "message " + n + " twice on replica " + replica);
                assertTrue(n > previous, "message " + n + " after " + previous + ": not the client's order");
                previous = n;
                assertTrue(n < written, "message " + n + " was never written");
            }
            for (Map.Entry<Integer, Long> e : acknowledged.entrySet()) {
                Long index = at.get(e.getKey());
                assertNotNull(index, "acknowledged message " + e.getKey() + " lost on replica " + replica);
                assertEquals(e.getValue(), index, "message " + e.getKey() + " is not at the index its write returned");
            }
        }
        Files.createDirectories(logs);
        Path historyFile = history.write(logs.resolve("history.jsonl"));
        LinearizabilityChecker.Verdict verdict = LinearizabilityChecker.check(historyFile, logs.resolve("history.html"));
        System.out.print("[RemoteClientFailoverTest] seed " + seed + ": " + verdict.output());
        assertTrue(verdict.linearizable(), "the independent checker (Porcupine) on " + historyFile + ": " + verdict.output());
    }

    private static byte[] message(int n) {
        return ("message " + n).getBytes(StandardCharsets.US_ASCII);
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
                    out.add(new long[]{Integer.parseInt(text.substring(8)), tailer.lastReadIndex()});
                }
            }
            return out;
        }
    }

    private static boolean converged(NodeProcess[] nodes, NodeProcess leader) {
        try {
            NodeProcess.Status l = leader.status();
            for (NodeProcess n : nodes) {
                NodeProcess.Status s = n.status();
                if (s.lastIndex() != l.lastIndex() || !"LIVE".equals(s.state())) {
                    return false;
                }
            }
            return true;
        } catch (Exception e) {
            return false;
        }
    }
}
