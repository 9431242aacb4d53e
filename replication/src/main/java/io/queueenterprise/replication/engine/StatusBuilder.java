package io.queueenterprise.replication.engine;

import io.queueenterprise.protocol.transport.EmbeddedTransport;
import io.queueenterprise.replication.NodeStatus;
import io.queueenterprise.replication.QueueStatus;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The node's status as the admin endpoint reports it, built from the role controller, the queues, the peers'
 * sessions and progress, the transport and the peers' addresses. Duty-cycle thread only.
 */
final class StatusBuilder {
    private final EngineSettings settings;
    private final RoleController roles;
    private final QueueReplica[] queues;
    private final PeerLink[] peers;
    private final DropCounters drops;
    private final EmbeddedTransport transport;
    private final PeerResolver resolver;
    private final io.queueenterprise.replication.session.PeerIdentities identities;
    private final PeerSessions sessions;
    private final NodeStatus.Identity identity;

    StatusBuilder(EngineSettings settings, RoleController roles, QueueReplica[] queues, PeerLink[] peers,
                  DropCounters drops, EmbeddedTransport transport, PeerResolver resolver,
                  io.queueenterprise.replication.session.PeerIdentities identities, PeerSessions sessions) {
        this.identities = identities;
        this.sessions = sessions;
        byte[] own = identities.ownPublicKeyBytes();
        this.identity = new NodeStatus.Identity(java.util.Base64.getEncoder().encodeToString(own),
                io.queueenterprise.crypto.IdentityKey.fingerprint(own), identities.persistent());
        this.settings = settings;
        this.roles = roles;
        this.queues = queues;
        this.peers = peers;
        this.drops = drops;
        this.transport = transport;
        this.resolver = resolver;
    }

    NodeStatus build() {
        long now = System.nanoTime();
        NodeStatus.Role role = roles.role();
        List<QueueStatus> list = new ArrayList<>();
        for (QueueReplica q : queues) {
            List<QueueStatus.PeerProgress> progress = new ArrayList<>();
            if (!q.open()) { // still opening: nothing held is known yet
                list.add(new QueueStatus(q.spec.name(), QueueStatus.State.STOPPED, -1, -1, -1, -1, progress, 0, drops.total(),
                        q.detail(), QueueStatus.Writer.NONE, q.resyncs, q.quarantines));
                continue;
            }
            if (role == NodeStatus.Role.LEADER) {
                for (PeerLink p : peers) {
                    if (p != null) {
                        PeerLink.FollowerQueue f = p.progress[q.position];
                        long lag = q.lastIndex < 0 ? 0 : Math.max(0, excerptsBetween(q, f.durableIndex, q.lastIndex));
                        progress.add(new QueueStatus.PeerProgress(p.id, p.established(), f.durableIndex, lag,
                                q.lagNanos(f.durableIndex, now), f.state));
                    }
                }
            }
            long durable = q.lastIndex;
            long blocked = q.writer.busyNanos(now);
            q.trackWriterStall(blocked);
            QueueStatus.Writer writer = new QueueStatus.Writer(TimeUnit.NANOSECONDS.toMillis(blocked), q.writerStalls,
                    q.lastWriterStallAt);
            list.add(new QueueStatus(q.spec.name(), q.reported(), q.lastIndex, durable, q.quorumIndex, q.store.firstIndex(),
                    progress, q.bytesReplicated, drops.total(), q.detail(), writer, q.resyncs, q.quarantines));
        }
        int leader = roles.leader();
        return new NodeStatus(settings.nodeId(), role, roles.term(), leader < 0 ? null : settings.peers().get(leader).id(),
                list, transportStatus(), peerAddresses(), lease(), identity);
    }

    private NodeStatus.Lease lease() {
        long now = System.nanoTime();
        LeaderLease lease = roles.lease();
        boolean leading = roles.role() == NodeStatus.Role.LEADER;
        List<NodeStatus.PeerEcho> echoes = new ArrayList<>();
        if (leading) {
            for (int i = 0; i < settings.peers().size(); i++) {
                if (i != settings.selfPosition()) {
                    long echo = lease.lastEcho(i);
                    echoes.add(new NodeStatus.PeerEcho(settings.peers().get(i).id(),
                            echo == Long.MIN_VALUE ? -1 : (now - echo) / 1_000_000));
                }
            }
        }
        long since = roles.acknowledgingSinceNanos();
        return new NodeStatus.Lease(leading && roles.acknowledgeUntil(now) > now, leading && lease.held(now),
                leading && lease.confirmed(), lease.timeoutNanos() / 1_000_000,
                since == Long.MIN_VALUE ? -1 : (now - since) / 1_000_000, echoes);
    }

    /** The embedded client and driver as the status reports them. */
    private NodeStatus.Transport transportStatus() {
        String problem = transport.problem();
        if (problem == null && transport.dead()) {
            problem = "the embedded Aeron client or driver closed; the node restarts them within "
                    + TimeUnit.NANOSECONDS.toMillis(EmbeddedTransport.CHECK_NANOS) + " ms";
        }
        long at = transport.lastRestartAtMillis();
        return new NodeStatus.Transport(problem == null, problem, transport.restarts(), transport.lastRestartCause(),
                at == 0 ? null : java.time.Instant.ofEpochMilli(at).toString());
    }

    /** Every other peer: whether this node has a channel to its address, and the latest reason it had none. */
    private List<NodeStatus.PeerAddress> peerAddresses() {
        List<NodeStatus.PeerAddress> out = new ArrayList<>(settings.peers().size());
        for (int i = 0; i < settings.peers().size(); i++) {
            if (i == settings.selfPosition()) {
                continue;
            }
            EngineSettings.Peer peer = settings.peers().get(i);
            String problem = resolver.problem(i);
            boolean resolved = problem == null && resolver.resolved(i);
            if (!resolved && problem == null) {
                problem = "host '" + peer.host() + "' is being looked up";
            }
            long at = resolver.lastProblemAtMillis(i);
            out.add(new NodeStatus.PeerAddress(peer.id(), peer.host(), resolved, problem, resolver.lastProblem(i),
                    at == 0 ? null : java.time.Instant.ofEpochMilli(at).toString(), identities.pinned(i),
                    sessions.provenFingerprint(peers[i])));
        }
        return out;
    }

    /** Excerpts after {@code from} up to {@code to}, counted within cycles (an estimate across a cycle change). */
    private static long excerptsBetween(QueueReplica q, long from, long to) {
        if (to <= from) {
            return 0;
        }
        if (from < 0) {
            return q.store.rollCycle().toSequenceNumber(to) + 1;
        }
        var rc = q.store.rollCycle();
        if (rc.toCycle(from) == rc.toCycle(to)) {
            return rc.toSequenceNumber(to) - rc.toSequenceNumber(from);
        }
        return rc.toSequenceNumber(to) + 1;
    }
}
