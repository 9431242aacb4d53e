package io.queueenterprise.replication;

import org.junit.jupiter.api.Test;

import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Ports for nodes that are killed and restarted on the same port must never be ones the kernel hands out itself. */
@org.junit.jupiter.api.Tag("unit")
class LoopbackPortsTest {
    @Test
    void portsLieBelowTheEphemeralRangeAreDistinctAndBindable() throws Exception {
        int firstEphemeral = LoopbackPorts.firstEphemeralPort();
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            int udp = LoopbackPorts.freeUdpPort();
            int tcp = LoopbackPorts.freeTcpPort();
            assertTrue(udp < firstEphemeral && tcp < firstEphemeral, () -> udp + "/" + tcp + " inside the ephemeral range from " + firstEphemeral);
            assertTrue(seen.add(udp) && seen.add(tcp), "a port handed out twice: " + udp + "/" + tcp);
            try (DatagramSocket u = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), udp));
                 ServerSocket t = new ServerSocket(tcp, 1, InetAddress.getLoopbackAddress())) {
                assertTrue(u.isBound() && t.isBound());
            }
        }
    }
}
