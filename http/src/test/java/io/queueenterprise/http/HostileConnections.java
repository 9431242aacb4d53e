package io.queueenterprise.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Hostile TCP clients of a control plane's HTTP port, on loopback only: idle, slow-loris (headers or a body trickling
 * a byte every 500 ms), half-open, oversized header, oversized body. Shared by the node's and the operator's tests
 * (this module's test-jar). Everything it opens is closed by {@link #close()}.
 */
public final class HostileConnections implements AutoCloseable {
    /** Per {@link #attack}: idle, slow-loris, half-open, oversized header, oversized body, slow body. */
    public static final int IDLE = 50;
    public static final int SLOW_LORIS = 20;
    public static final int HALF_OPEN = 20;
    public static final int OVERSIZED_HEADER = 10;
    public static final int OVERSIZED_BODY = 10;
    public static final int SLOW_BODY = 10;
    public static final int PER_ATTACK = IDLE + SLOW_LORIS + HALF_OPEN + OVERSIZED_HEADER + OVERSIZED_BODY + SLOW_BODY;

    private final List<Socket> sockets = new ArrayList<>();
    /** Trickling connections and the byte each gets every 500 ms: a header name growing, or JSON whitespace. */
    private final Map<Socket, Character> trickling = new ConcurrentHashMap<>();
    private ScheduledExecutorService drip;

    /**
     * Opens {@link #PER_ATTACK} hostile connections to {@code port}, each starting {@code requestLine}
     * ("GET /healthz HTTP/1.1"); {@code token} goes into the bodies' headers (null: none).
     */
    public void attack(int port, String requestLine, String token) throws IOException {
        String authorization = token == null ? "" : "Authorization: Bearer " + token + "\r\n";
        String post = requestLine.replace("GET", "POST");
        for (int i = 0; i < SLOW_BODY; i++) {
            // whole headers, then a body that trickles in a byte every 500 ms
            Socket s = connect(port);
            s.getOutputStream().write((post + "\r\nHost: 127.0.0.1\r\n" + authorization
                    + "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{").getBytes(StandardCharsets.US_ASCII));
            trickling.put(s, ' ');
        }
        for (int i = 0; i < IDLE; i++) {
            connect(port); // connects, sends nothing
        }
        for (int i = 0; i < SLOW_LORIS; i++) {
            Socket s = connect(port);
            s.getOutputStream().write((requestLine + "\r\nHost: 127.0.0.1\r\n").getBytes(StandardCharsets.US_ASCII));
            trickling.put(s, 'X');
        }
        for (int i = 0; i < HALF_OPEN; i++) {
            connect(port).getOutputStream().write(requestLine.substring(0, 8).getBytes(StandardCharsets.US_ASCII));
        }
        for (int i = 0; i < OVERSIZED_HEADER; i++) {
            // 32 KiB of one header and no end of headers: more than any limit a control endpoint needs
            writeIgnoringRefusal(connect(port), requestLine + "\r\nHost: 127.0.0.1\r\nX-Padding: " + "a".repeat(32 * 1024));
        }
        for (int i = 0; i < OVERSIZED_BODY; i++) {
            // announces 100 MB, sends 32 KiB, then stalls
            writeIgnoringRefusal(connect(port), post + "\r\nHost: 127.0.0.1\r\n" + authorization
                    + "Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n" + "{".repeat(32 * 1024));
        }
    }

    /** From now on every trickling connection gets a byte every 500 ms, until {@link #close()}. */
    public void startDripping() {
        drip = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "slow-loris-drip");
            t.setDaemon(true);
            return t;
        });
        drip.scheduleAtFixedRate(this::dripOneByte, 0, 500, TimeUnit.MILLISECONDS);
    }

    /** Opens one connection that sends nothing. */
    public Socket connect(int port) throws IOException {
        Socket s = new Socket();
        sockets.add(s);
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5_000);
        s.setSoTimeout(1);
        return s;
    }

    public int count() {
        return sockets.size();
    }

    /**
     * Waits up to {@code bound} for the server to close every hostile connection; returns how many it left open
     * (and how many of those were trickling, in {@code stillTrickling[0]} when given).
     */
    public int openAfter(Duration bound, int[] stillTrickling) throws InterruptedException {
        long start = System.nanoTime();
        List<Socket> open = new ArrayList<>(sockets);
        while (!open.isEmpty() && System.nanoTime() - start < bound.toNanos()) {
            open.removeIf(HostileConnections::closedByServer);
            Thread.sleep(250);
        }
        if (stillTrickling != null) {
            stillTrickling[0] = (int) open.stream().filter(trickling::containsKey).count();
        }
        return open.size();
    }

    @Override
    public void close() {
        if (drip != null) {
            drip.shutdownNow();
        }
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing is best effort; the server closes its side too
            }
        }
    }

    /** True once the server has closed {@code s} (end of stream or reset); any answer it sent first is skipped. */
    private static boolean closedByServer(Socket s) {
        byte[] buffer = new byte[8192];
        try {
            InputStream in = s.getInputStream();
            while (true) {
                if (in.read(buffer) < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    /** A server that refuses an oversized request may close before the whole of it is written: that is fine. */
    private static void writeIgnoringRefusal(Socket s, String text) {
        try {
            OutputStream out = s.getOutputStream();
            out.write(text.getBytes(StandardCharsets.US_ASCII));
            out.flush();
        } catch (IOException refused) {
            // the server closed on the oversized request
        }
    }

    /** A request that must answer while the attack goes on. */
    public interface Call {
        void run() throws Exception;
    }

    /**
     * Runs {@code call}; fails naming {@code what} if the client gave up (an {@code HttpTimeoutException}) or it took
     * {@code bound} or more; returns "what N ms" for the test's report.
     */
    public static String timed(String what, Duration bound, Call call) throws Exception {
        long start = System.nanoTime();
        try {
            call.run();
        } catch (java.net.http.HttpTimeoutException e) {
            throw new AssertionError(what + " did not answer within the client's timeout while hostile connections are held", e);
        }
        long micros = (System.nanoTime() - start) / 1_000;
        if (micros >= bound.toNanos() / 1_000) {
            throw new AssertionError(what + " took " + micros / 1000 + " ms (bound " + bound.toMillis() + " ms)");
        }
        return what + " " + String.format("%.1f ms", micros / 1000.0);
    }

    private void dripOneByte() {
        for (Map.Entry<Socket, Character> s : trickling.entrySet()) {
            try {
                s.getKey().getOutputStream().write(s.getValue());
            } catch (IOException closedByServer) {
                // the server gives up on a trickling connection: that is what it must do
            }
        }
    }
}
