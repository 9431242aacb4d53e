package io.queueenterprise.replication.engine;

import io.aeron.Aeron;
import io.aeron.ControlledFragmentAssembler;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.queueenterprise.protocol.transport.EmbeddedTransport;
import io.queueenterprise.protocol.transport.UdpChannels;
import io.queueenterprise.replication.ReplicationException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's Aeron channels to its peers: one subscription on its own replication port and one publication per
 * peer whose host name resolved ({@link PeerResolver}). Made again after each restart of the transport. Duty-cycle
 * thread only.
 */
final class PeerChannels {
    private static final Logger LOG = LoggerFactory.getLogger(PeerChannels.class);
    static final int STREAM_ID = 0x5145; // "QE"

    private final EngineSettings settings;
    private final PeerLink[] peers;
    private final PeerResolver resolver;
    private final ControlledFragmentAssembler assembler;
    /** Per peer position: the publication behind that peer's {@link PeerLink#sink}, kept here to close it. */
    private final ExclusivePublication[] publications;
    private Aeron aeron;
    private Subscription subscription;

    PeerChannels(EngineSettings settings, PeerLink[] peers, PeerResolver resolver, ControlledFragmentHandler inbound) {
        this.settings = settings;
        this.peers = peers;
        this.resolver = resolver;
        this.assembler = new ControlledFragmentAssembler(inbound);
        this.publications = new ExclusivePublication[peers.length];
    }

    /** The subscription, and a publication to every peer whose name resolved; a port that cannot be bound is thrown. */
    void attach(Aeron aeron) {
        this.aeron = aeron;
        EngineSettings.Peer me = settings.self();
        try {
            subscription = aeron.addSubscription(channel(me), STREAM_ID);
        } catch (io.aeron.exceptions.AeronException e) {
            throw bindFailure("replication port", me.host(), me.replicationPort(), e);
        }
        for (PeerLink p : peers) {
            if (p != null) {
                publications[p.position] = null;
                p.sink = null;
                addPublication(p);
            }
        }
    }

    /** Closes the publications and the subscription (the client died: they may be closed already). */
    void detach() {
        for (PeerLink p : peers) {
            if (p != null && publications[p.position] != null) {
                closeQuietly(publications[p.position]::close);
            }
        }
        if (subscription != null) {
            closeQuietly(subscription::close);
        }
    }

    /** The subscription is gone (not made yet, or closed under the node). */
    boolean closed() {
        return subscription == null || subscription.isClosed();
    }

    /** Publications to peers whose host names resolved since. */
    void addMissingPublications() {
        for (PeerLink p : peers) {
            if (p != null && publications[p.position] == null) {
                addPublication(p);
            }
        }
    }

    int poll(int fragmentLimit) {
        return subscription.controlledPoll(assembler, fragmentLimit);
    }

    /**
     * Adds the publication to a peer whose host name resolved; until then the peer gets nothing from this node (no
     * handshake, no answer) and the reason is in the resolver's problems.
     */
    private void addPublication(PeerLink p) {
        if (!resolver.resolved(p.position)) {
            return;
        }
        try {
            ExclusivePublication publication = aeron.addExclusivePublication(publicationChannel(settings.peers().get(p.position)),
                    STREAM_ID);
            publications[p.position] = publication;
            p.sink = publication::offer; // bound once per publication: offering through it allocates nothing
            resolver.connected(p.position);
        } catch (RuntimeException e) { // Aeron's own lookup failed (the name went away again) or the channel is refused
            LOG.warn(settings.nodeId() + ": no channel to peer " + p.id + " yet: " + e.getMessage());
            resolver.retry(p.position, "no channel to " + settings.peers().get(p.position).host() + ": " + e.getMessage());
        }
    }

    private static String channel(EngineSettings.Peer peer) {
        return UdpChannels.endpoint(peer.host(), peer.replicationPort());
    }

    /** The channel to a peer: {@link UdpChannels#publication}, Aeron's largest MTU on loopback. */
    static String publicationChannel(EngineSettings.Peer peer) {
        return UdpChannels.publication(peer.host(), peer.replicationPort());
    }

    /**
     * A UDP port the media driver could not bind, in one sentence naming it ("replication port udp 127.0.0.1:7001
     * is in use"); Aeron's own message is a driver-side stack location around the OS's reason.
     */
    static ReplicationException bindFailure(String what, String host, int port, RuntimeException e) {
        String message = String.valueOf(e.getMessage());
        String where = what + " udp " + host + ":" + port;
        if (message.contains("Address already in use")) {
            return new ReplicationException(where + " is in use (another process has it bound)", e);
        }
        // "ERROR - channel error - <reason> (at <frame>): <channel>": the reason is what a person can act on
        java.util.regex.Matcher reason = java.util.regex.Pattern.compile("channel error - (.*?)( \\(at .*)?: aeron:.*").matcher(message);
        return new ReplicationException(where + " cannot be bound: " + (reason.find() ? reason.group(1) : message), e);
    }

    private void closeQuietly(Runnable close) {
        EmbeddedTransport.closeQuietly(settings.nodeId(), close);
    }
}
