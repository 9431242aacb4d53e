package io.queueenterprise.cli;

import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.replication.history.LinearizabilityChecker;
import io.queueenterprise.replication.history.OperationHistory;
import net.openhft.chronicle.queue.RollCycles;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three {@code qe node} processes, each in a network namespace of its own ({@link NetworkLab}), replicating over the
 * lab's impaired wire. One fault at a time — loss, delay, reordering, duplication, a partition of one follower —
 * while the leader takes quorum writes (from this process, into the leader's queue directory); after each fault is
 * healed every replica converges to the same excerpts at the same indexes (per-index digests), holding every
 * acknowledged message. The last round also kills a follower with SIGKILL and restarts it in its namespace.
 * Bounded: six rounds, 60 quorum writes each, at most 90 s to converge after each. Every write's call and return and
 * each replica's final contents are recorded and judged by the independent linearizability checker as well
 * (docs/testing.md "Linearizability checking").
 */
@org.junit.jupiter.api.Tag("process")
@org.junit.jupiter.api.Tag("netns")
@org.junit.jupiter.api.Tag("slow")
class NetworkFaultsTest {
    private static final String QUEUE = "orders";
    private static final int WRITES_PER_FAULT = 60;
    private static final Duration CONVERGE = Duration.ofSeconds(90);

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void replicasConvergeAfterEveryFault() throws Exception {
        Assumptions.assumeTrue(NetworkLab.unavailableReason().isEmpty(), () -> "skipped: " + NetworkLab.unavailableReason().orElse(""));
        long seed = Long.getLong("qe.faults.seed", System.nanoTime());
        System.out.println("NetworkFaultsTest seed " + seed + " (-Dqe.faults.seed=" + seed + " repeats the switch's draws)");
        List<String> acknowledged = new ArrayList<>();
        OperationHistory history = new OperationHistory();
        try (NetworkLab lab = NetworkLab.create(3, seed);
             LocalCluster cluster = new LocalCluster(tmp.resolve("cluster"), List.of(lab.address(0), lab.address(1), lab.address(2)),
                     false, List.of(new LocalCluster.Queue(QUEUE, "FAST_DAILY", "NONE", "QUORUM", "30s")), "SLEEPING", lab::start)) {
            for (int i = 0; i < 3; i++) {
                cluster.start(i);
            }
            // The admin endpoints listen inside the namespaces: drive them with qe node ... run there.
            admin(lab, cluster, 0, "promote", "--term", "1");
            admin(lab, cluster, 1, "follow", "--leader", "replica-0", "--term", "1");
            admin(lab, cluster, 2, "follow", "--leader", "replica-0", "--term", "1");

            String[][] faults = {
                    {"loss 20% on replica-1 and replica-2", "impair 1 0.2 0 0 0", "impair 2 0.2 0 0 0"},
                    {"delay 30 ms on replica-2", "impair 2 0 30 0 0"},
                    {"reordering 30% on both followers", "impair 1 0 0 0.3 0", "impair 2 0 0 0.3 0"},
                    {"duplication 30% on both followers", "impair 1 0 0 0 0.3", "impair 2 0 0 0 0.3"},
                    {"replica-1 partitioned", "partition 1"},
                    {"replica-2 killed (SIGKILL) while replica-1 loses 20%", "impair 1 0.2 0 0 0", "kill 2"},
            };
            for (String[] fault : faults) {
                for (int f = 1; f < fault.length; f++) {
                    if (fault[f].startsWith("kill ")) {
                        cluster.kill(Integer.parseInt(fault[f].substring(5)));
                    } else {
                        apply(lab, fault[f]);
                    }
                }
                write(cluster.queueDirectory(0, QUEUE), fault[0], acknowledged, history);
                lab.heal();
                for (int f = 1; f < fault.length; f++) {
                    if (fault[f].startsWith("kill ")) {
                        cluster.start(Integer.parseInt(fault[f].substring(5))); // back in its namespace, same data
                    }
                }
                awaitConvergence(cluster, acknowledged.size(), fault[0] + " (seed " + seed + ")");
            }
            String stats = lab.stats();
            System.out.println("NetworkFaultsTest switch: " + stats);
            // The faults hit replication traffic: packets were dropped, duplicated and held back.
            for (String counter : List.of("dropped", "duplicated", "reordered")) {
                long value = Long.parseLong(stats.replaceAll(".*" + counter + "=(\\d+).*", "$1"));
                assertTrue(value > 0, counter + ": " + stats);
            }
        }
        List<String> held = NodeProcessesTest.readAll(tmp.resolve("cluster/replica-2/data").resolve(QUEUE));
        assertEquals(acknowledged, held, "every acknowledged message, in order, on a follower");
        for (int i = 0; i < 3; i++) {
            history.readReplica(QUEUE, "replica-" + i, tmp.resolve("cluster/replica-" + i + "/data").resolve(QUEUE), RollCycles.FAST_DAILY);
        }
        Path historyFile = history.write(tmp.resolve("history.jsonl"));
        LinearizabilityChecker.Verdict verdict = LinearizabilityChecker.check(historyFile, tmp.resolve("history.html"));
        System.out.print("NetworkFaultsTest history: " + verdict.output());
        assertTrue(verdict.linearizable(), "the independent checker (Porcupine): " + verdict.output());
    }

    private static void apply(NetworkLab lab, String command) throws IOException {
        String[] w = command.split(" ");
        if (w[0].equals("partition")) {
            lab.partition(Integer.parseInt(w[1]));
        } else {
            lab.impair(Integer.parseInt(w[1]), Double.parseDouble(w[2]), Integer.parseInt(w[3]), Double.parseDouble(w[4]),
                    Double.parseDouble(w[5]));
        }
    }

    private void admin(NetworkLab lab, LocalCluster cluster, int replica, String... command) throws Exception {
        List<String> args = new ArrayList<>(List.of("node"));
        args.addAll(List.of(command));
        args.addAll(List.of("--admin", cluster.adminAddress(replica), "--token-file", cluster.tokenFile().toString()));
        Path log = tmp.resolve("admin-" + replica + "-" + command[0] + ".log");
        Process p = lab.start(replica, LocalCluster.qeCommand(args.toArray(String[]::new)), log);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError("qe " + String.join(" ", args) + " failed: " + Files.readString(log));
        }
    }

    private static void write(Path leaderQueue, String fault, List<String> acknowledged, OperationHistory history) {
        try (EnterpriseQueue queue = EnterpriseQueue.builder(leaderQueue).quorumAcks(Duration.ofSeconds(30)).build();
             QueueAppender appender = queue.createAppender()) {
            for (int i = 0; i < WRITES_PER_FAULT; i++) {
                String message = fault + " #" + i;
                byte[] payload = message.getBytes(StandardCharsets.UTF_8);
                OperationHistory.Append op = history.append(0, QUEUE, payload);
                op.ok(writeOnceLeading(appender, payload)); // returns once a majority holds it
                acknowledged.add(message);
            }
        }
    }

    /**
     * The write, tried again while the leader refuses it for want of its lease (nothing written each time): just
     * promoted, it acknowledges once a majority follows it (docs/replication.md "Leader lease"); at most 30 s.
     */
    private static long writeOnceLeading(QueueAppender appender, byte[] payload) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                return appender.write(payload);
            } catch (io.queueenterprise.queue.QueueConfigurationException e) {
                if (e.problem() != io.queueenterprise.queue.QueueConfigurationException.Problem.REPLICA_CANNOT_WRITE
                        || System.nanoTime() - deadline > 0) {
                    throw e;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L);
            }
        }
    }

    private static void awaitConvergence(LocalCluster cluster, int excerpts, String after) throws InterruptedException {
        long deadline = System.nanoTime() + CONVERGE.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            ReplicaDigest leader = ReplicaDigest.of(cluster.queueDirectory(0, QUEUE), "FAST_DAILY");
            String difference = null;
            for (int i = 1; i < 3 && difference == null; i++) {
                String d = leader.differenceFrom(ReplicaDigest.of(cluster.queueDirectory(i, QUEUE), "FAST_DAILY"));
                difference = d == null ? null : "replica-" + i + ": " + d;
            }
            if (difference == null && leader.excerpts() == excerpts) {
                return;
            }
            last = difference == null ? "leader holds " + leader.excerpts() + " of " + excerpts : difference;
            Thread.sleep(250);
        }
        assertNull(last, "replicas did not converge within " + CONVERGE + " after " + after);
    }
}
