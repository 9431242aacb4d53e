package io.queueenterprise.remote;

import io.aeron.Aeron;
import io.aeron.ControlledFragmentAssembler;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.Header;
import io.queueenterprise.protocol.transport.EmbeddedTransport;
import io.queueenterprise.protocol.transport.UdpChannels;
import org.agrona.DirectBuffer;
import org.agrona.IoUtil;
import org.agrona.concurrent.AgentInvoker;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;

/**
 * The client's transport over Aeron (UDP): an exclusive publication per node (stream {@link RemoteQueue#STREAM_ID},
 * {@link RemoteQueue#TERM_LENGTH} terms) and one reply subscription. Either on an embedded media driver and client
 * ({@link EmbeddedTransport} in INVOKER mode, launched, driven and closed here), or on the application's own
 * {@link Aeron} client: then nothing is launched, its conductor is invoked here only when it runs in invoker mode,
 * and closing closes only the publications and the subscription added here, never the application's client.
 */
final class AeronClientTransport implements ClientTransport {
    /** How long the embedded driver and client tolerate not being driven (see {@link EmbeddedTransport}): a day. */
    static final long EMBEDDED_LIVENESS_TIMEOUT_NS = 86_400_000_000_000L;
    /** Aeron's default IPC term length: the client publishes nothing over IPC. */
    private static final int IPC_TERM_LENGTH = 64 * 1024;
    private static final long BIND_TIMEOUT_NANOS = 10_000_000_000L;

    private final EmbeddedTransport embedded;
    private final Path embeddedDirectory;
    private final Aeron aeron;
    private final AgentInvoker conductorInvoker;
    private final Subscription replies;
    private final String replyHost;
    private final int replyPort;
    private final ControlledFragmentAssembler assembler = new ControlledFragmentAssembler(this::onFragment);
    private FrameHandler handler;

    private AeronClientTransport(EmbeddedTransport embedded, Path embeddedDirectory, Aeron aeron, String replyHost, int replyPort) {
        this.embedded = embedded;
        this.embeddedDirectory = embeddedDirectory;
        this.aeron = aeron;
        this.conductorInvoker = aeron.conductorAgentInvoker(); // null: the application's client has its own conductor thread
        Subscription subscription = null;
        try {
            subscription = aeron.addSubscription("aeron:udp?endpoint=" + replyHost + ":" + replyPort, RemoteQueue.STREAM_ID);
            this.replies = subscription;
            this.replyHost = replyHost;
            this.replyPort = replyPort != 0 ? replyPort : boundPort();
        } catch (RuntimeException e) {
            if (subscription != null) {
                subscription.close();
            }
            throw e;
        }
    }

    /** On an embedded media driver and client in {@code directory} (deleted on close). */
    static AeronClientTransport embedded(Path directory, String replyHost, int replyPort) {
        // Driver and client are driven by the application's thread, which may leave them alone for as long as it
        // neither reads nor writes: at Aeron's 10 s default the client then closed itself for good ("service interval
        // exceeded"). Nodes still see a silent client at once (image liveness and connection timeouts keep defaults).
        EmbeddedTransport embedded = new EmbeddedTransport("remote client", directory, EMBEDDED_LIVENESS_TIMEOUT_NS,
                RemoteQueue.TERM_LENGTH, IPC_TERM_LENGTH);
        try {
            embedded.start(NOTHING_ATTACHED, System.nanoTime());
            return new AeronClientTransport(embedded, directory, embedded.aeron(), replyHost, replyPort);
        } catch (RuntimeException e) {
            embedded.close();
            IoUtil.delete(directory.toFile(), true);
            throw e;
        }
    }

    /** On the application's own client: launches nothing and leaves {@code aeron} open on close. */
    static AeronClientTransport onApplicationAeron(Aeron aeron, String replyHost, int replyPort) {
        return new AeronClientTransport(null, null, aeron, replyHost, replyPort);
    }

    /** The reply subscription and the publications are the transport's own, not re-attached: the client does not restart the pair. */
    private static final EmbeddedTransport.Attachments NOTHING_ATTACHED = new EmbeddedTransport.Attachments() {
        @Override
        public void attach(Aeron aeron) {
        }

        @Override
        public void detach() {
        }
    };

    @Override
    public Link connect(InetSocketAddress node) {
        // Aeron's largest MTU to a node on loopback (batches of appends in one datagram), its default to any other
        ExclusivePublication publication = aeron.addExclusivePublication(UdpChannels.publication(node.getHostString(),
                node.getPort()) + "|term-length=" + RemoteQueue.TERM_LENGTH, RemoteQueue.STREAM_ID);
        return new Link() {
            @Override
            public boolean isConnected() {
                return publication.isConnected();
            }

            @Override
            public long offer(DirectBuffer buffer, int offset, int length) {
                return publication.offer(buffer, offset, length);
            }

            @Override
            public int maxMessageLength() {
                return publication.maxMessageLength();
            }

            @Override
            public int maxPayloadLength() {
                return publication.maxPayloadLength();
            }

            @Override
            public void close() {
                publication.close();
            }
        };
    }

    @Override
    public int poll(FrameHandler handler, int limit) {
        int n = invoke();
        this.handler = handler;
        n += replies.controlledPoll(assembler, limit);
        return n;
    }

    private int invoke() {
        int n = embedded != null ? embedded.invoke() : 0;
        if (embedded == null && conductorInvoker != null) {
            n += conductorInvoker.invoke();
        }
        return n;
    }

    private ControlledFragmentHandler.Action onFragment(DirectBuffer buffer, int offset, int length, Header header) {
        return handler.onFrame(buffer, offset, length) ? ControlledFragmentHandler.Action.CONTINUE
                : ControlledFragmentHandler.Action.ABORT;
    }

    @Override
    public String replyHost() {
        return replyHost;
    }

    @Override
    public int replyPort() {
        return replyPort;
    }

    private int boundPort() {
        // an application's driver binds on its own thread: wait for it, driving ours meanwhile
        long deadline = System.nanoTime() + BIND_TIMEOUT_NANOS;
        while (System.nanoTime() - deadline < 0) {
            List<String> bound = replies.localSocketAddresses();
            if (!bound.isEmpty()) {
                String a = bound.get(0);
                return Integer.parseInt(a.substring(a.lastIndexOf(':') + 1));
            }
            if (invoke() == 0) {
                Thread.onSpinWait();
            }
        }
        throw new IllegalStateException("the reply subscription on " + replyHost + " did not bind within 10 s");
    }

    @Override
    public void close() {
        if (embedded != null) {
            embedded.close(); // closes every publication and the subscription with the client
            IoUtil.delete(embeddedDirectory.toFile(), true);
        } else {
            replies.close();
        }
    }
}
