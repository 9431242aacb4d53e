package io.queueenterprise.bench.ratio;

import io.queueenterprise.bench.harness.Directories;
import io.queueenterprise.queue.EnterpriseQueue;
import io.queueenterprise.queue.QueueAppender;
import io.queueenterprise.replication.AckMode;
import io.queueenterprise.replication.LoopbackPorts;
import io.queueenterprise.replication.QueueStatus;
import io.queueenterprise.replication.ReplicationNode;
import io.queueenterprise.replication.config.NodeConfig;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The CPU a replication follower spends per excerpt it stores: two nodes in this process on UDP loopback (leader
 * {@code replica-0}, follower {@code replica-1}, a plain queue, async acks, {@code BACKOFF} idle strategy unless told); each
 * round appends a burst of excerpts on the leader with the library and waits until the follower's status holds the
 * last of them; the follower's threads ({@code qe-replication-replica-1}, the duty thread with its embedded media
 * driver, and {@code qe-writer-replica-1-*}, its queue's writer) are timed in their own CPU time (ThreadMXBean), so
 * time they spent preempted by other processes is not counted. Reported: the median over rounds of CPU ns per
 * excerpt, per thread and together, with the interquartile range.
 *
 * <p>What is counted besides the copies: everything the follower does per excerpt (receive, verify, decode, hand
 * over, write, checksum, ack), what its threads spend idling between batches (the backoff's spins and yields), and
 * on the duty thread the status this class asks for every 2 ms while it waits (a snapshot built on that thread);
 * the last two are the same for two builds measured alike, which is what the figure is for (before/after a change).
 */
public final class FollowerCost {
    private static final String QUEUE = "cost";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final int size;
    private final int excerptsPerRound;
    private final int rounds;
    private final int warmupRounds;
    private NodeConfig.IdleStrategySpec idleStrategy = NodeConfig.IdleStrategySpec.BACKOFF;

    /**
     * The nodes' idle strategy: {@code SLEEPING} (1 ms when a cycle found nothing) leaves out most of the idling, so
     * what remains is mostly the work per excerpt; {@code BACKOFF} is the setting of a 2-core node.
     */
    public FollowerCost idleStrategy(NodeConfig.IdleStrategySpec strategy) {
        this.idleStrategy = strategy;
        return this;
    }

    public FollowerCost(int size, int excerptsPerRound, int rounds, int warmupRounds) {
        if (size < 1 || excerptsPerRound < 1 || rounds < 3 || warmupRounds < 0) {
            throw new IllegalArgumentException("size, excerpts >= 1, rounds >= 3, warm-up rounds >= 0 (got size=" + size
                    + ", excerpts=" + excerptsPerRound + ", rounds=" + rounds + ", warm-up=" + warmupRounds + ")");
        }
        this.size = size;
        this.excerptsPerRound = excerptsPerRound;
        this.rounds = rounds;
        this.warmupRounds = warmupRounds;
    }

    /** CPU ns per excerpt per measured round: duty thread, writer thread, and their sum. */
    public record Result(int size, int excerptsPerRound, NodeConfig.IdleStrategySpec idle, double[] dutyNs, double[] writerNs,
                         double[] totalNs) {
    }

    public Result run(PrintStream progress) throws IOException {
        Path shm = Path.of("/dev/shm");
        Path root = Files.createTempDirectory(Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")),
                "qe-follower-cost-");
        // The queues (about 2 x (rounds + warm-up) x excerpts x size bytes, in memory when under /dev/shm) and the
        // nodes' Aeron directories go with the run, also when the JVM is stopped mid-run (Ctrl-C, SIGTERM).
        Owned owned = new Owned(root);
        Thread cleanup = new Thread(owned::closeAtExit, "qe-follower-cost-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        progress.printf("size %d: leader and follower under %s (removed at the end)%n", size, root);
        try {
            return measure(root, owned, progress);
        } catch (IOException | RuntimeException e) {
            if (owned.stoppedAtExit) { // the hook closed the nodes under the run: that is why it failed
                throw new Stopped(root);
            }
            throw e;
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or has run: owned.close() below waits for it and finds everything closed
            }
            owned.close();
        }
    }

    private Result measure(Path root, Owned owned, PrintStream progress) throws IOException {
        Path credential = root.resolve("peer-credential");
        Files.createFile(credential, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        byte[] secret = new byte[32];
        RANDOM.nextBytes(secret);
        Files.write(credential, secret);
        List<NodeConfig.Peer> peers = io.queueenterprise.replication.config.LocalIdentities.assign(List.of(
                new NodeConfig.Peer("replica-0", "127.0.0.1", LoopbackPorts.freeUdpPort()),
                new NodeConfig.Peer("replica-1", "127.0.0.1", LoopbackPorts.freeUdpPort())), root.resolve("identities"));
        NodeConfig.QueueSpec queue = new NodeConfig.QueueSpec(QUEUE, "FAST_DAILY", NodeConfig.Encryption.NONE,
                AckMode.ASYNC, Duration.ofSeconds(10), NodeConfig.Retention.unbounded());
        ReplicationNode leader = owned.own(ReplicationNode.start(nodeConfig(root, "replica-0", peers, credential, queue)));
        leader.promote(1);
        EnterpriseQueue leaderQueue = owned.own(EnterpriseQueue.builder(root.resolve("replica-0").resolve(QUEUE)).build());
        ReplicationNode follower = owned.own(ReplicationNode.start(nodeConfig(root, "replica-1", peers, credential, queue)));
        follower.follow("replica-0", 1);
        // with the lease on (as every node read from YAML) the leader takes a write only once a majority heard it
        io.queueenterprise.bench.subject.ReplicatedSubject.awaitLease(leader);
        try (QueueAppender appender = leaderQueue.createAppender()) {
            byte[] message = new byte[size];
            RANDOM.nextBytes(message);
            long last = appender.write(message);
            awaitFollower(follower, last);
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            long duty = threadId("qe-replication-replica-1");
            long writer = threadId("qe-writer-replica-1-" + QUEUE);
            double[] dutyNs = new double[rounds];
            double[] writerNs = new double[rounds];
            double[] totalNs = new double[rounds];
            for (int round = -warmupRounds; round < rounds; round++) {
                long duty0 = threads.getThreadCpuTime(duty);
                long writer0 = threads.getThreadCpuTime(writer);
                for (int i = 0; i < excerptsPerRound; i++) {
                    last = appender.write(message);
                }
                awaitFollower(follower, last);
                long dutyCpu = threads.getThreadCpuTime(duty) - duty0;
                long writerCpu = threads.getThreadCpuTime(writer) - writer0;
                if (round >= 0) {
                    dutyNs[round] = (double) dutyCpu / excerptsPerRound;
                    writerNs[round] = (double) writerCpu / excerptsPerRound;
                    totalNs[round] = dutyNs[round] + writerNs[round];
                }
                progress.printf("size %d, round %d of %d%s: %.0f ns per excerpt (duty %.0f, writer %.0f)%n", size,
                        round + warmupRounds + 1, rounds + warmupRounds, round < 0 ? " (warm-up)" : "",
                        (double) (dutyCpu + writerCpu) / excerptsPerRound, (double) dutyCpu / excerptsPerRound,
                        (double) writerCpu / excerptsPerRound);
            }
            return new Result(size, excerptsPerRound, idleStrategy, dutyNs, writerNs, totalNs);
        }
    }

    /**
     * The JVM is stopping (Ctrl-C, SIGTERM): the run was cut short, and the shutdown hook closed and removed what it
     * opened and said so on stderr.
     */
    public static final class Stopped extends RuntimeException {
        Stopped(Path root) {
            super("stopped; " + root + " removed");
        }
    }

    /**
     * What a run opened, closed last-opened first (the follower, the leader's queue, the leader: each node removes
     * its Aeron directory), then the run's directory removed; once, by the run or by the shutdown hook, whichever
     * comes first (the other waits for it).
     */
    private static final class Owned {
        private final Path root;
        private final Deque<AutoCloseable> opened = new ArrayDeque<>();
        private boolean closed;
        volatile boolean stoppedAtExit;

        Owned(Path root) {
            this.root = root;
        }

        /** {@code resource}, closed with the run; closed now if the run is already being stopped. */
        synchronized <T extends AutoCloseable> T own(T resource) {
            if (closed) {
                closeQuietly(resource);
                throw new IllegalStateException("the JVM is stopping: the run was stopped");
            }
            opened.push(resource);
            return resource;
        }

        synchronized void close() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            Exception failure = null;
            while (!opened.isEmpty()) {
                try {
                    opened.pop().close();
                } catch (Exception e) {
                    if (failure == null) {
                        failure = e;
                    } else {
                        failure.addSuppressed(e);
                    }
                }
            }
            try {
                Directories.deleteRecursively(root);
            } catch (UncheckedIOException e) {
                if (failure == null) {
                    throw e.getCause();
                }
                failure.addSuppressed(e);
            }
            if (failure instanceof IOException io) {
                throw io;
            }
            if (failure instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (failure != null) {
                throw new IOException("closing the run's nodes and queue", failure);
            }
        }

        void closeAtExit() {
            stoppedAtExit = true;
            try {
                close();
                // said here: the run's own thread may never get to say it (the JVM halts once the hooks are done)
                System.err.println("follower-cost: stopped; " + root + " removed");
            } catch (Exception | Error e) {
                System.err.println("follower-cost: cleaning up " + root + " at exit: " + e);
            }
        }

        private static void closeQuietly(AutoCloseable resource) {
            try {
                resource.close();
            } catch (Exception ignored) {
                // the run is being stopped; its directory is removed next
            }
        }
    }

    public static void print(Result r, PrintStream out) {
        out.printf("follower CPU per excerpt, %d B, %d rounds of %d excerpts, nodes %s: median (IQR) ns%n", r.size(),
                r.totalNs().length, r.excerptsPerRound(), r.idle());
        out.printf("  duty thread    %8.0f (%.0f-%.0f)%n", PathRatios.percentile(r.dutyNs(), 50),
                PathRatios.percentile(r.dutyNs(), 25), PathRatios.percentile(r.dutyNs(), 75));
        out.printf("  writer thread  %8.0f (%.0f-%.0f)%n", PathRatios.percentile(r.writerNs(), 50),
                PathRatios.percentile(r.writerNs(), 25), PathRatios.percentile(r.writerNs(), 75));
        out.printf("  both           %8.0f (%.0f-%.0f)%n", PathRatios.percentile(r.totalNs(), 50),
                PathRatios.percentile(r.totalNs(), 25), PathRatios.percentile(r.totalNs(), 75));
        out.printf("  rounds (both): %s%n", Arrays.toString(Arrays.stream(r.totalNs()).mapToLong(Math::round).toArray()));
    }

    private static void awaitFollower(ReplicationNode follower, long index) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            QueueStatus status = follower.status().queues().get(0);
            if (status.lastIndex() >= index) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the follower did not store index 0x" + Long.toHexString(index)
                        + " within 60 s: " + status);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    private static long threadId(String name) {
        for (ThreadInfo info : ManagementFactory.getThreadMXBean().dumpAllThreads(false, false)) {
            if (info.getThreadName().equals(name)) {
                return info.getThreadId();
            }
        }
        throw new IllegalStateException("no thread named " + name);
    }

    private NodeConfig nodeConfig(Path root, String id, List<NodeConfig.Peer> peers, Path credential,
                                  NodeConfig.QueueSpec queue) {
        return new NodeConfig(NodeConfig.SCHEMA_VERSION, id, root.resolve(id), peers, credential, List.of(queue),
                new NodeConfig.Admin("127.0.0.1", 0, root.resolve("admin-token-" + id)), new NodeConfig.Metrics("127.0.0.1", 0),
                idleStrategy).withIdentityKeyFile(
                io.queueenterprise.replication.config.LocalIdentities.keyFile(root.resolve("identities"), id))
                .withLeaseTimeout(io.queueenterprise.replication.engine.EngineSettings.DEFAULT_LEASE_TIMEOUT); // as from YAML
    }
}
