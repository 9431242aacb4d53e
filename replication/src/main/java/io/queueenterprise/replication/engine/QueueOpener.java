package io.queueenterprise.replication.engine;

import io.queueenterprise.queue.ReplicaStore;
import io.queueenterprise.replication.AckMode;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Opens the node's queues off the duty thread and hands each one, ready, to the duty cycle through one slot per
 * queue (an {@link AtomicReferenceArray}: no lock, the volatile write and read order everything the opener did before
 * it). Opening can block for seconds: Chronicle waits 10 s for an exclusive lock on {@code metadata.cq4t} that another
 * process holds (a stalled or stopped writer) before it fails, and the node reads every excerpt once to check its
 * recorded checksums. On the duty thread that would starve the embedded media driver (INVOKER mode: nothing else runs
 * its conductor; Aeron fails FATAL once its service interval is exceeded) and stop every other queue; here only the
 * queue being opened waits. A queue that cannot be opened is retried every {@link #RETRY_NANOS}; its slot says why
 * meanwhile. Up to {@value #WORKERS} threads open queues side by side, so one blocked queue holds up no other (more
 * blocked queues than that wait their turn); they end once every queue is handed over, or the node closes.
 */
final class QueueOpener {
    static final long RETRY_NANOS = 2_000_000_000L;
    private static final long IDLE_NANOS = 20_000_000L;
    private static final int WORKERS = 4;
    private static final Logger LOG = LoggerFactory.getLogger(QueueOpener.class);

    /** A queue opened, recovered and checked, for the duty thread to take. */
    record Opened(ReplicaStore store, TermHistory history, long lastIndex, String damage, ExcerptChecksums checksums,
                  DescriptorWatch descriptorWatch, String note, io.queueenterprise.replication.QueueStatus.Quarantines quarantines) {
        void close() {
            checksums.close();
            store.close();
        }
    }

    /** The latest attempt to open a queue failed; retried. */
    record Failed(String reason) {
    }

    /** Slot values the duty thread writes: taken (adopted), or closed (the node is closing: the opener closes what it opens). */
    private static final Object TAKEN = new Object();
    private static final Object CLOSED = new Object();

    private final List<EngineSettings.QueueSettings> specs;
    private final BooleanSupplier refetchDamaged;
    private final Path dataDirectory;
    private final AtomicReferenceArray<Object> slots;
    /** Positions to try; a position is owned by the worker that polled it until it offers it back. */
    private final ConcurrentLinkedQueue<Integer> work = new ConcurrentLinkedQueue<>();
    private final long[] notBeforeNanos;
    private final boolean[] triedOnce;
    private final AtomicInteger tried = new AtomicInteger();
    private final AtomicInteger opened = new AtomicInteger();
    private final Thread[] workers;
    /** The longest close() waits for the workers' attempts under way (a Chronicle open: normally milliseconds). */
    static final long CLOSE_WAIT_MILLIS = 10_000;
    private volatile boolean closed;

    /**
     * @param refetchDamaged whether a damaged copy may be cut back to its last sound excerpt and fetched again: true
     *                       while the node's persisted role is follower (a leader has no one to fetch from)
     */
    QueueOpener(String nodeId, List<EngineSettings.QueueSettings> specs, Path dataDirectory, BooleanSupplier refetchDamaged) {
        this.refetchDamaged = refetchDamaged;
        this.specs = specs;
        this.dataDirectory = dataDirectory;
        this.slots = new AtomicReferenceArray<>(specs.size());
        this.notBeforeNanos = new long[specs.size()];
        this.triedOnce = new boolean[specs.size()];
        for (int q = 0; q < specs.size(); q++) {
            work.add(q);
        }
        // A few workers, so that one queue blocked in Chronicle does not hold up the others' opening.
        this.workers = new Thread[Math.min(specs.size(), WORKERS)];
        for (int w = 0; w < workers.length; w++) {
            workers[w] = new Thread(this::run, "qe-queue-opener-" + nodeId + "-" + w);
            workers[w].setDaemon(true);
        }
    }

    void start() {
        for (Thread worker : workers) {
            worker.start();
        }
    }

    /** Every queue was tried at least once (opened or failed): a node's start returns then. */
    boolean firstPassDone() {
        return closed || tried.get() == specs.size();
    }

    /** Duty thread: the queue at {@code position} if it is ready and not yet taken (taking it), else null. */
    Opened take(int position) {
        Object value = slots.get(position);
        if (value instanceof Opened ready && slots.compareAndSet(position, value, TAKEN)) {
            return ready;
        }
        return null;
    }

    /** Why the queue at {@code position} is not open yet, or null while its first attempt runs. */
    String problem(int position) {
        return slots.get(position) instanceof Failed failed ? failed.reason() : null;
    }

    /**
     * Stops retrying; whatever is ready and not taken, or opened from now on, is closed here. Then waits, at most
     * {@link #CLOSE_WAIT_MILLIS} in all, for the workers to end the attempt they are in, so that nothing of the opener
     * runs once the node is closed: a node that could not start exits right after, and a worker still initialising
     * Chronicle during the JVM's shutdown wrote a stack trace to stderr (NodeStartFailureTest, once in a full build).
     */
    void close() {
        closed = true;
        for (int q = 0; q < slots.length(); q++) {
            Object value = slots.getAndSet(q, CLOSED);
            if (value instanceof Opened ready) {
                ready.close();
            }
        }
        for (Thread worker : workers) {
            LockSupport.unpark(worker); // a parked worker sees closed at once
        }
        long deadline = System.currentTimeMillis() + CLOSE_WAIT_MILLIS;
        try {
            for (Thread worker : workers) {
                long left = deadline - System.currentTimeMillis();
                if (worker != Thread.currentThread() && left > 0) {
                    worker.join(left);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closing goes on; the workers end on their own
        }
    }

    private void run() {
        while (!closed && opened.get() < specs.size()) {
            Integer position = work.poll();
            if (position == null) {
                LockSupport.parkNanos(IDLE_NANOS); // the rest are being tried by other workers
                continue;
            }
            int q = position;
            if (System.nanoTime() < notBeforeNanos[q]) {
                work.offer(position);
                LockSupport.parkNanos(IDLE_NANOS);
                continue;
            }
            Object before = slots.get(q);
            Object result;
            try {
                result = open(specs.get(q));
            } catch (RuntimeException | Error e) {
                LOG.error("queue " + specs.get(q).name() + " cannot be opened (retried every "
                        + RETRY_NANOS / 1_000_000_000L + " s): " + e);
                result = new Failed(String.valueOf(e));
            }
            if (!slots.compareAndSet(q, before, result)) { // closed meanwhile
                if (result instanceof Opened ready) {
                    ready.close();
                }
                return;
            }
            if (!triedOnce[q]) {
                triedOnce[q] = true;
                tried.incrementAndGet();
            }
            if (result instanceof Opened) {
                opened.incrementAndGet();
            } else {
                notBeforeNanos[q] = System.nanoTime() + RETRY_NANOS;
                work.offer(position);
            }
        }
    }

    private Opened open(EngineSettings.QueueSettings spec) {
        Path dir = dataDirectory.resolve(spec.name());
        Quarantine.recoverInterruptedRebuild(dir);
        net.openhft.chronicle.queue.RollCycle rollCycle = RollCycleNames.of(spec.rollCycle());
        ReplicaStore store = ReplicaStore.open(dir, rollCycle);
        try {
            store.recordAckMode(ackModeMark(spec.ackMode()));
            // Chronicle keeps no checksum: bytes changed on disk since this node stored them must not be served or acked.
            ExcerptChecksums.Damage found = ExcerptChecksums.verify(store, dir);
            String damage = found == null ? null : found.message();
            String note = null;
            if (found != null && refetchDamaged.getAsBoolean()) {
                ReplicaStore cut = refetch(store, spec, found);
                if (cut != null) {
                    store = cut;
                    note = "damaged on disk (" + found.message() + "): excerpts after 0x" + Long.toHexString(found.lastGoodIndex())
                            + " moved to " + Quarantine.DIR_NAME + "/ and fetched again from the leader";
                    damage = null;
                } else {
                    store = ReplicaStore.open(dir, rollCycle); // as it was: reported CORRUPTED below
                    damage += "; it could not be moved aside (see the log)";
                }
            }
            if (damage != null) {
                LOG.error(spec.name() + ": " + damage + "; this copy is not served or"
                        + " acknowledged: rebuild this replica (move the queue directory aside; the leader copies it anew)");
            }
            TermHistory history = TermHistory.load(dir);
            long lastIndex = store.lastIndex();
            return new Opened(store, history, lastIndex, damage, ExcerptChecksums.open(dir), new DescriptorWatch(dir), note,
                    Quarantine.onDisk(dir));
        } catch (RuntimeException | Error e) {
            store.close();
            throw e;
        }
    }

    /**
     * A follower's damaged copy: everything after its last sound excerpt goes to the quarantine (the original files
     * whole, never deleted) and the queue is rebuilt up to that excerpt; HELLO then fetches the rest from the leader,
     * which holds everything it acknowledged. Returns the rebuilt store, or null when that failed ({@code store} is
     * closed either way).
     */
    private static ReplicaStore refetch(ReplicaStore store, EngineSettings.QueueSettings spec, ExcerptChecksums.Damage found) {
        try {
            ReplicaStore cut = Quarantine.truncateAfter(store, spec.name(), found.lastGoodIndex(), io.queueenterprise.replication.QueueStatus.QuarantineReason.DAMAGED,
                    found.message());
            cut.recordAckMode(ackModeMark(spec.ackMode()));
            cut.publishWritableTerm(-1);
            LOG.warn(spec.name() + ": " + found.message() + "; the excerpts after 0x"
                    + Long.toHexString(found.lastGoodIndex()) + " were moved to the quarantine and are fetched again from the leader");
            return cut;
        } catch (RuntimeException e) {
            LOG.error(spec.name() + ": a damaged copy could not be moved aside: " + e, e);
            try {
                store.close();
            } catch (RuntimeException alreadyClosed) {
                // closed by the quarantine before it failed
            }
            return null;
        }
    }

    static long ackModeMark(AckMode mode) {
        return switch (mode) {
            case ASYNC -> ReplicaStore.ACK_ASYNC;
            case REPLICATED_READS -> ReplicaStore.ACK_REPLICATED_READS;
            case QUORUM -> ReplicaStore.ACK_QUORUM;
        };
    }
}
