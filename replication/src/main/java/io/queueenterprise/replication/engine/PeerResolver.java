package io.queueenterprise.replication.engine;


import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Looks up the peers' host names off the duty thread, and again with bounded backoff while a name does not resolve:
 * in Kubernetes a peer's name (a pod of a StatefulSet behind a headless Service) resolves only once its pod exists,
 * which may be after this node started, or again after it was rescheduled. Until its name resolves, the node holds
 * no publication to that peer (Aeron would refuse the channel) and says why in {@link #problems()}; it starts and
 * serves everything else meanwhile. A DNS lookup can block for seconds (resolver timeouts): never on the duty thread.
 *
 * <p>One daemon thread; it parks when every name is resolved, until {@link #retry} asks again (Aeron refused a
 * channel to a name that resolved here).
 */
final class PeerResolver implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PeerResolver.class);
    static final long FIRST_RETRY_NANOS = 250_000_000L;
    static final long MAX_RETRY_NANOS = 30_000_000_000L;

    private final String nodeId;
    private final List<String> hosts;
    /** 1 once the peer's host resolved (or is an address), 0 while it must be looked up (again). */
    private final AtomicIntegerArray resolved;
    private final AtomicReferenceArray<String> problems;
    /** The latest problem per peer since start, kept once it is solved (the status reports it), and when (epoch ms). */
    private final AtomicReferenceArray<String> lastProblems;
    private final AtomicLongArray lastProblemAtMillis;
    private final Thread thread;
    private volatile boolean closed;

    PeerResolver(String nodeId, List<EngineSettings.Peer> peers, int self) {
        this.nodeId = nodeId;
        this.hosts = peers.stream().map(EngineSettings.Peer::host).toList();
        this.resolved = new AtomicIntegerArray(hosts.size());
        this.problems = new AtomicReferenceArray<>(hosts.size());
        this.lastProblems = new AtomicReferenceArray<>(hosts.size());
        this.lastProblemAtMillis = new AtomicLongArray(hosts.size());
        for (int i = 0; i < hosts.size(); i++) {
            if (i == self || isAddress(hosts.get(i))) {
                resolved.set(i, 1); // nothing to look up: Aeron parses an address without a lookup
            }
        }
        this.thread = new Thread(this::run, "qe-resolve-" + nodeId);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    static boolean isAddress(String host) {
        return io.queueenterprise.protocol.transport.UdpChannels.isAddressLiteral(host);
    }

    /** Whether the peer's host resolved (a publication to it can be added now). Any thread. */
    boolean resolved(int peer) {
        return resolved.get(peer) == 1;
    }

    /** Aeron could not use the peer's address after all: look it up again (with backoff), saying why meanwhile. */
    void retry(int peer, String why) {
        report(peer, why);
        if (isAddress(hosts.get(peer))) {
            return; // an address does not get better by looking it up; the reason stays reported
        }
        resolved.set(peer, 0);
        LockSupport.unpark(thread);
    }

    /** Peers whose host does not resolve (or whose channel Aeron refused), by position, with the reason. */
    Map<Integer, String> problems() {
        Map<Integer, String> out = new LinkedHashMap<>();
        for (int i = 0; i < hosts.size(); i++) {
            String problem = problems.get(i);
            if (problem != null) {
                out.put(i, problem);
            }
        }
        return out;
    }

    private void report(int peer, String problem) {
        lastProblemAtMillis.set(peer, System.currentTimeMillis());
        lastProblems.set(peer, problem);
        problems.set(peer, problem);
    }

    /** Why this node has no channel to {@code peer} now, or null. Any thread. */
    String problem(int peer) {
        return problems.get(peer);
    }

    /** The latest reason it had none since start (kept once solved), or null. Any thread. */
    String lastProblem(int peer) {
        return lastProblems.get(peer);
    }

    /** When {@link #lastProblem} was last seen (epoch ms), 0 when never. Any thread. */
    long lastProblemAtMillis(int peer) {
        return lastProblemAtMillis.get(peer);
    }

    /** The duty thread added its publication: nothing to report for this peer any more. */
    void connected(int peer) {
        problems.set(peer, null);
    }

    private void run() {
        long backoff = FIRST_RETRY_NANOS;
        while (!closed) {
            boolean missing = false;
            for (int i = 0; i < hosts.size(); i++) {
                if (resolved.get(i) == 1) {
                    continue;
                }
                try {
                    InetAddress.getByName(hosts.get(i)); // cached by the JVM for the driver's own lookup right after
                    resolved.set(i, 1);
                    LOG.info(nodeId + ": peer host " + hosts.get(i) + " resolves now");
                } catch (UnknownHostException | SecurityException e) {
                    missing = true;
                    String problem = "host '" + hosts.get(i) + "' does not resolve (yet): " + e.getMessage()
                            + "; looked up again with backoff (at most every " + MAX_RETRY_NANOS / 1_000_000_000L + " s)";
                    if (!problem.equals(problems.get(i))) {
                        LOG.warn(nodeId + ": " + problem);
                    }
                    report(i, problem);
                }
            }
            if (missing) {
                LockSupport.parkNanos(backoff);
                backoff = Math.min(backoff * 2, MAX_RETRY_NANOS);
            } else {
                backoff = FIRST_RETRY_NANOS;
                LockSupport.park(); // until retry() or close()
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
    }
}
