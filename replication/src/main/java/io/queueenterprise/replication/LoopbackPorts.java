package io.queueenterprise.replication;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntPredicate;

/**
 * Ports free now on loopback, for nodes started on one machine (the demo, tests, benchmarks): bound, then released,
 * so the node that binds it moments later gets it. Loopback only, by design.
 *
 * <p>Why not port 0: the kernel hands out ports from its ephemeral range to every socket that binds port 0, Aeron's
 * send sockets included. A node killed and restarted on "its" port could find that port taken meanwhile by another
 * node's new publication, and fail to start. So ports come from below the ephemeral range (read from
 * {@code /proc/sys/net/ipv4/ip_local_port_range}), which the kernel never hands out by itself; a random start
 * keeps two test JVMs on one machine apart, and a port is handed out at most once per JVM.
 */
public final class LoopbackPorts {
    private static final int LOWEST = 10_000;
    private static final int ATTEMPTS = 2_000;
    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    private LoopbackPorts() {
    }

    /** A UDP port (a replication endpoint) free now on loopback, outside the kernel's ephemeral range. */
    public static int freeUdpPort() {
        return pick("UDP", port -> {
            try (DatagramSocket socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))) {
                return socket.isBound(); // bound, then closed: free now
            } catch (IOException inUse) {
                return false;
            }
        });
    }

    /** A TCP port (an admin or metrics endpoint) free now on loopback, outside the kernel's ephemeral range. */
    public static int freeTcpPort() {
        return pick("TCP", port -> {
            try (ServerSocket socket = new ServerSocket()) {
                socket.setReuseAddress(false);
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
                return true;
            } catch (IOException inUse) {
                return false;
            }
        });
    }

    private static int pick(String protocol, IntPredicate bindable) {
        int highest = firstEphemeralPort() - 1;
        if (highest - LOWEST < 1_000) {
            throw new IllegalStateException("the kernel's ephemeral port range starts at " + (highest + 1)
                    + ": too few ports below it for test nodes (" + EPHEMERAL_RANGE + ")");
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int port = LOWEST + random.nextInt(highest - LOWEST + 1);
            if (HANDED_OUT.add(port) && bindable.test(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free " + protocol + " port on loopback between " + LOWEST + " and " + highest
                + " after " + ATTEMPTS + " attempts");
    }

    /** The first port of the kernel's ephemeral range (Linux's default when the file cannot be read). */
    static int firstEphemeralPort() {
        try {
            // readLine, not readString: a /proc file reports size 0 and readString's sized read can stop short
            String[] range;
            try (var reader = Files.newBufferedReader(EPHEMERAL_RANGE)) {
                range = reader.readLine().trim().split("\\s+");
            }
            return Integer.parseInt(range[0]);
        } catch (IOException | RuntimeException unreadable) {
            return 32_768;
        }
    }
}
