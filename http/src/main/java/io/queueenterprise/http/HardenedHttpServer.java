package io.queueenterprise.http;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.Scheduler;

import java.io.IOException;
import java.net.BindException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The control planes' HTTP endpoints (the node's admin and metrics ports, the operator's metrics and probes), each
 * its own Jetty server with its own bounded pool, so that no connection, however hostile, and no metrics scrape can
 * hold the thread a promote, a fence or a probe needs (issue 19 §3; limits in docs/node-contract.md, "HTTP endpoints
 * under hostile connections"). Connections are served by NIO selectors: an idle, slow or half-open connection holds
 * a socket, never a worker thread.
 */
public final class HardenedHttpServer {
    /** A connection that sends nothing for this long is closed (idle, half-open, a stalled body). */
    public static final long IDLE_TIMEOUT_MS = 5_000;
    /**
     * A connection that keeps sending bytes without completing a request through two checks this far apart is
     * closed (slow-loris headers or bodies): a request's header and body must arrive within 10–15 s.
     */
    public static final long REQUEST_READ_CHECK_MS = 5_000;
    /** Request line and headers: a bearer token and a few standard headers fit many times over. */
    public static final int MAX_REQUEST_HEADER_BYTES = 8 * 1024;
    /** Open connections per endpoint; past it accepting pauses and open connections idle out after {@link #IDLE_AT_LIMIT_MS}. */
    public static final int MAX_CONNECTIONS = 1024;
    public static final long IDLE_AT_LIMIT_MS = 1_000;
    /** Threads per endpoint: one acceptor, one selector, the rest run requests. */
    public static final int MAX_THREADS = 8;

    private HardenedHttpServer() {
    }

    /**
     * A started server for {@code handler} on {@code host:port} (port 0: any free port); a port another process holds
     * is refused in one sentence naming it ("admin port tcp 127.0.0.1:7190 is in use"). {@code what} and {@code owner}
     * name its threads ("qe-admin-replica-0").
     */
    public static Server start(String what, String owner, String host, int port, Handler handler) throws IOException {
        // Jetty's own job queue (it warns against bounding it): the jobs waiting are bounded all the same, by
        // MAX_CONNECTIONS, as an HTTP/1.1 connection has at most one request in flight.
        QueuedThreadPool pool = new QueuedThreadPool(MAX_THREADS, 2, 60_000, 0, null, null);
        pool.setName("qe-" + what + "-" + owner);
        pool.setDaemon(true);
        Server server = new Server(pool);
        server.setStopTimeout(0);
        HttpConfiguration http = new HttpConfiguration();
        http.setRequestHeaderSize(MAX_REQUEST_HEADER_BYTES);
        http.setIdleTimeout(IDLE_TIMEOUT_MS);
        http.setSendServerVersion(false);
        ServerConnector connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
        connector.setHost(host);
        connector.setPort(port);
        connector.setIdleTimeout(IDLE_TIMEOUT_MS);
        connector.addBean(new RequestReadDeadline(connector.getScheduler()));
        server.addConnector(connector);
        NetworkConnectionLimit limit = new NetworkConnectionLimit(MAX_CONNECTIONS, connector);
        limit.setEndPointIdleTimeout(IDLE_AT_LIMIT_MS);
        server.addBean(limit);
        server.setHandler(handler);
        try {
            // bound here rather than in start(), which would log the failure with a stack trace before we name the port
            connector.open();
        } catch (IOException e) {
            connector.close();
            throw bindFailure(what, host, port, e);
        }
        try {
            server.start();
        } catch (Exception e) {
            stop(server);
            throw new IOException(what + " endpoint on tcp " + host + ":" + port + " did not start: " + e, e);
        }
        return server;
    }

    public static int port(Server server) {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    /** Connections the server holds open now (at most {@link #MAX_CONNECTIONS}). */
    public static int openConnections(Server server) {
        return ((ServerConnector) server.getConnectors()[0]).getConnectedEndPoints().size();
    }

    public static void stop(Server server) {
        try {
            server.stop();
        } catch (Exception e) {
            // stopping is best effort at close; the pool's threads are daemons
        }
    }

    /** A complete plain-text answer: the body is {@code text} and a line end. */
    public static void sendText(Response response, Callback callback, int status, String text) {
        byte[] body = (text + "\n").getBytes(StandardCharsets.UTF_8);
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
    }

    private static IOException bindFailure(String what, String host, int port, IOException e) {
        String where = what + " port tcp " + host + ":" + port;
        Throwable cause = e;
        while (cause != null && !(cause instanceof BindException)) {
            cause = cause.getCause();
        }
        String reason = String.valueOf((cause == null ? e : cause).getMessage());
        return new BindException(reason.startsWith("Address already in use")
                ? where + " is in use (another process has it bound)" : where + " cannot be bound: " + reason);
    }

    /**
     * Closes a connection that keeps trickling bytes without ever completing a request: the idle timeout alone
     * would let a byte every few seconds hold it for ever.
     */
    private static final class RequestReadDeadline implements Connection.Listener {
        private final Scheduler scheduler;

        RequestReadDeadline(Scheduler scheduler) {
            this.scheduler = scheduler;
        }

        @Override
        public void onOpened(Connection connection) {
            new Watch(connection).arm();
        }

        private final class Watch implements Runnable {
            private final Connection connection;
            private long bytesIn;
            private long requestsIn;
            private boolean behindOnce;

            Watch(Connection connection) {
                this.connection = connection;
            }

            void arm() {
                scheduler.schedule(this, REQUEST_READ_CHECK_MS, TimeUnit.MILLISECONDS);
            }

            @Override
            public void run() {
                if (!connection.getEndPoint().isOpen()) {
                    return;
                }
                long bytes = connection.getBytesIn();
                long requests = connection.getMessagesIn();
                boolean trickling = bytes > bytesIn && requests == requestsIn;
                if (trickling && behindOnce) {
                    connection.getEndPoint().close();
                    return;
                }
                behindOnce = trickling;
                bytesIn = bytes;
                requestsIn = requests;
                arm();
            }
        }
    }
}
