package io.queueenterprise.replication;

import io.queueenterprise.queue.AckTimeoutException;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.queue.QueueException;
import io.queueenterprise.queue.QueueConfigurationException;
import io.queueenterprise.replication.history.LinearizabilityChecker;
import io.queueenterprise.replication.history.OperationHistory;
import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Nodes as child JVMs on UDP loopback, killed with SIGKILL at random points while an application appends in quorum
 * mode; the operator's part (promote the survivor with the highest durable index under a new term, tell the others
 * to follow) is played by the test. Seeded trials, bounded in count and time; the seed is printed on failure
 * ({@code -Dqe.failover.seed=S -Dqe.failover.trials=N} to replay or run more).
 *
 * <p>Each kill event is either a SIGKILL of a random node, or (half the time) both followers frozen with SIGSTOP
 * while the writer goes on, the leader SIGKILLed, then the followers resumed with SIGCONT: the case where a leader
 * holds excerpts no follower has.
 *
 * <p>Properties: no acknowledged excerpt is ever lost (after convergence every replica holds it, with its bytes, at
 * its index), and no index holds different bytes on two replicas. Besides these assertions, every append's call and
 * return and each replica's final contents are recorded ({@link OperationHistory}, kept beside the node logs) and
 * checked by an independent linearizability checker ({@link LinearizabilityChecker}: Porcupine against an
 * append-only log, where an acknowledged append holds exactly once at its index and an unacknowledged one at most
 * once, at its own index).
 */
@org.junit.jupiter.api.Tag("process")
@org.junit.jupiter.api.Tag("slow")
class MultiProcessFailoverTest {
    private static final String QUEUE = "orders";
    // a restarted node can first wait out Chronicle's recovery of what its killed incarnation left (20-40 s measured)
    private static final Duration CONVERGE = Duration.ofSeconds(120);

    @TempDir
    Path tmp;

    @Test
    void inQuorumModeNoAcknowledgedExcerptIsLostAndNoIndexDiffersBetweenReplicas() throws Exception {
        SeededTrials.run("qe.failover", 5, tmp, "failover-logs", this::trial);
    }

    private void trial(long seed, Path root, Path logs) throws Exception {
        Random random = new Random(seed);
        TestCluster cluster = new TestCluster(root, 3, List.of(TestCluster.queue(QUEUE, AckMode.QUORUM)));
        String spec = QUEUE + ":QUORUM:FAST_DAILY";
        NodeProcess[] nodes = new NodeProcess[3];
        Map<Long, byte[]> acknowledged = new ConcurrentHashMap<>();
        OperationHistory history = new OperationHistory();
        try {
            for (int i = 0; i < 3; i++) {
                nodes[i] = NodeProcess.start(cluster, i, spec, logs.resolve("node-" + i + ".log"));
            }
            int leader = 0;
            long term = 1;
            nodes[0].command("promote 1");
            nodes[1].command("follow replica-0 1");
            nodes[2].command("follow replica-0 1");
            int kills = 3;
            for (int event = 0; event < kills; event++) {
                AtomicBoolean stop = new AtomicBoolean();
                Thread writer = startWriter(cluster.queueDirectory(leader, QUEUE), seed, event, stop, acknowledged, history);
                Thread.sleep(150 + random.nextInt(600));
                boolean freezeFollowers = random.nextBoolean();
                int victim = freezeFollowers ? leader : random.nextInt(3);
                if (freezeFollowers) {
                    // both followers stall (a partition, a long pause) while the writer goes on; then the leader dies:
                    // what it wrote meanwhile was never acknowledged and must not count as such
                    nodes[(leader + 1) % 3].signal("STOP");
                    nodes[(leader + 2) % 3].signal("STOP");
                    Thread.sleep(100 + random.nextInt(400));
                }
                nodes[victim].kill();
                if (freezeFollowers) {
                    nodes[(leader + 1) % 3].signal("CONT");
                    nodes[(leader + 2) % 3].signal("CONT");
                }
                assertEquals(137, nodes[victim].exitValue(), "killed by SIGKILL");
                Thread.sleep(random.nextInt(300));
                stop.set(true);
                writer.join(30_000);
                if (victim != leader) {
                    nodes[victim] = NodeProcess.start(cluster, victim, spec, logs.resolve("node-" + victim + ".log"));
                    assertEquals("FOLLOWER", nodes[victim].status().role(), "a restarted follower follows again");
                } else {
                    // the operator: the survivor with the highest durable index leads under a new term
                    int a = (victim + 1) % 3;
                    int b = (victim + 2) % 3;
                    int next = nodes[a].status().lastIndex() >= nodes[b].status().lastIndex() ? a : b;
                    int other = next == a ? b : a;
                    term++;
                    nodes[next].command("promote " + term);
                    nodes[other].command("follow replica-" + next + " " + term);
                    nodes[victim] = NodeProcess.start(cluster, victim, spec, logs.resolve("node-" + victim + ".log"));
                    nodes[victim].command("follow replica-" + next + " " + term);
                    leader = next;
                }
            }
            // a last stretch with everyone up, then convergence
            AtomicBoolean stop = new AtomicBoolean();
            Thread writer = startWriter(cluster.queueDirectory(leader, QUEUE), seed, kills, stop, acknowledged, history);
            Thread.sleep(300);
            stop.set(true);
            writer.join(30_000);
            NodeProcess leading = nodes[leader];
            assertTrue(TestCluster.await(CONVERGE, () -> NodeProcess.converged(nodes, leading)), () -> "replicas did not converge: " + describe(nodes));
        } finally {
            for (NodeProcess node : nodes) {
                if (node != null) {
                    node.close();
                }
            }
        }
        assertTrue(acknowledged.size() > 0, "the trial acknowledged some excerpts");
        Map<Long, byte[]> first = null;
        for (int i = 0; i < 3; i++) {
            Map<Long, byte[]> held = history.readReplica(QUEUE, "replica-" + i, cluster.queueDirectory(i, QUEUE), RollCycles.FAST_DAILY);
            if (first == null) {
                first = held;
            } else {
                assertNull(QueueContents.difference(first, held), "replica " + i + " vs 0");
            }
        }
        Files.createDirectories(logs);
        Path historyFile = history.write(logs.resolve("history.jsonl"));
        LinearizabilityChecker.Verdict verdict = LinearizabilityChecker.check(historyFile, logs.resolve("history.html"));
        System.out.print("[MultiProcessFailoverTest] seed " + seed + ": " + verdict.output());
        assertTrue(verdict.linearizable(), "the independent checker (Porcupine) on " + historyFile + ": " + verdict.output());
        for (Map.Entry<Long, byte[]> e : acknowledged.entrySet()) {
            byte[] held = first.get(e.getKey());
            assertNotNull(held, "acknowledged excerpt at 0x" + Long.toHexString(e.getKey()) + " lost");
            assertArrayEquals(e.getValue(), held, "acknowledged excerpt at 0x" + Long.toHexString(e.getKey()) + " changed");
        }
    }

    /** Appends in quorum mode until told to stop; records what was acknowledged. */
    private static Thread startWriter(Path dir, long seed, int event, AtomicBoolean stop, Map<Long, byte[]> acknowledged,
                                      OperationHistory history) {
        Thread t = new Thread(() -> {
            try (EnterpriseQueue queue = EnterpriseQueue.builder(dir).quorumAcks(Duration.ofMillis(500)).build();
                 QueueAppender appender = queue.createAppender()) {
                Random payloads = new Random(seed * 31 + event);
                for (int n = 0; !stop.get(); n++) {
                    byte[] payload = new byte[16 + payloads.nextInt(200)];
                    payloads.nextBytes(payload);
                    byte[] tag = ("e" + event + "n" + n).getBytes(StandardCharsets.US_ASCII);
                    System.arraycopy(tag, 0, payload, 0, Math.min(tag.length, payload.length));
                    OperationHistory.Append op = history.append(event, QUEUE, payload);
                    try {
                        long index = appender.write(payload);
                        op.ok(index);
                        acknowledged.put(index, payload);
                    } catch (AckTimeoutException notAcknowledged) {
                        // written locally, not acknowledged: may be kept or quarantined, both fine
                        op.timedOut(notAcknowledged.index());
                    } catch (QueueException failed) {
                        if (failed instanceof QueueConfigurationException refused
                                && refused.problem() == QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE) {
                            op.refused(); // the node stopped leading: refused before anything was written
                        } else {
                            op.unknown();
                        }
                        return;
                    }
                }
            }
        }, "quorum-writer-" + event);
        t.start();
        return t;
    }


    private static String describe(NodeProcess[] nodes) {
        StringBuilder b = new StringBuilder();
        for (NodeProcess n : nodes) {
            try {
                b.append(n.position).append('=').append(n.status()).append(' ');
            } catch (Exception e) {
                b.append(n.position).append("=? ");
            }
        }
        return b.toString();
    }
}
