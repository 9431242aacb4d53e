package io.queueenterprise.protocol.transport;

import java.util.regex.Pattern;

/**
 * Aeron UDP channels to a node, for the replication peers, the remote clients and the replies to them alike: to a
 * loopback address with {@link #LOOPBACK_MTU}, to any other with Aeron's default MTU.
 */
public final class UdpChannels {
    /**
     * Aeron's largest datagram, for an endpoint on this host's loopback interface (its MTU is 64 KiB: nothing is
     * fragmented). Aeron's sender sends one datagram per publication and duty cycle, and a datagram on loopback costs
     * the sender a system call that also runs the receiving socket's path: with the default MTU (1,408 bytes) a 64 KiB
     * batch takes 47 duty cycles and system calls on each side, with this one 2.
     */
    public static final int LOOPBACK_MTU = 65504;
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    private UdpChannels() {
    }

    /** {@code aeron:udp?endpoint=host:port}. */
    public static String endpoint(String host, int port) {
        return "aeron:udp?endpoint=" + host + ":" + port;
    }

    /**
     * The channel of a publication to {@code host:port}: to a loopback address with {@link #LOOPBACK_MTU}; to any other,
     * Aeron's default MTU, which fits an Ethernet frame (a larger one would be fragmented by IP on a path whose MTU this
     * side cannot know, and one lost fragment loses the whole datagram). The MTU is the sender's choice: the receiver
     * takes any datagram.
     */
    public static String publication(String host, int port) {
        String channel = endpoint(host, port);
        return isLoopback(host) ? channel + "|mtu=" + LOOPBACK_MTU : channel;
    }

    /** An address written as such (IPv4 dotted, IPv6 with colons or in brackets), not a name to look up. */
    public static boolean isAddressLiteral(String host) {
        return IPV4.matcher(host).matches() || host.indexOf(':') >= 0 || host.startsWith("[");
    }

    /** A loopback address written as such (127.0.0.0/8, ::1, localhost); names are never looked up here. */
    public static boolean isLoopback(String host) {
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        return h.equalsIgnoreCase("localhost") || h.equals("::1") || h.equals("0:0:0:0:0:0:0:1")
                || (h.startsWith("127.") && IPV4.matcher(h).matches());
    }
}
