package io.queueenterprise.replication;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * Ports free now on loopback, for nodes started on one machine (the demo, tests, benchmarks): bound, then released,
 * so the node that binds it moments later normally gets it. Loopback only, by design.
 */
public final class LoopbackPorts {
    private LoopbackPorts() {
    }

    /** A UDP port (a replication endpoint) free now on loopback. */
    public static int freeUdpPort() {
        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free UDP port on loopback", e);
        }
    }

    /** A TCP port (an admin or metrics endpoint) free now on loopback. */
    public static int freeTcpPort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free TCP port on loopback", e);
        }
    }
}
